// Preloaded into a spawned CLI (NODE_OPTIONS=--import=...) by the progress tests: the process's
// clock runs $RABBIT_TIME_LAPSE times as fast as the wall's. Date.now and performance.now move on
// that much faster, and every timer (setTimeout, setInterval, node:timers, node:timers/promises)
// fires that much sooner, so the CLI sees its own time consistently: a line "every 5 s" comes
// after 5 s of its clock, its elapsed and time left are read off the same clock, and a test
// watches a run of many such intervals in a fraction of the wall time. The CLI itself is
// unchanged; the clock is injected at the process boundary, as slow-disk.mjs slows its reads.
// Loaded after slow-disk.mjs, whose waits are then real milliseconds (the test's own figures).
import timers from 'node:timers';
import timersPromises from 'node:timers/promises';
import { syncBuiltinESMExports } from 'node:module';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const scale = Number(process.env.RABBIT_TIME_LAPSE ?? 1);

if (isMainThread && scale > 1) {
  const wallNow = Date.now;
  const wallStart = wallNow();
  Date.now = () => Math.floor(wallStart + (wallNow() - wallStart) * scale);
  const perfNow = performance.now.bind(performance);
  const perfStart = perfNow();
  performance.now = () => perfStart + (perfNow() - perfStart) * scale;

  /** A delay of the CLI's clock in wall milliseconds (never below the 1 ms Node gives any timer). */
  const shrink = (ms) => (typeof ms === 'number' && ms > 0 ? Math.max(1, ms / scale) : ms);
  const faster = (timer) => Object.assign((callback, ms, ...args) => timer(callback, shrink(ms), ...args), timer);
  const setTimeoutFaster = faster(globalThis.setTimeout);
  const setIntervalFaster = faster(globalThis.setInterval);
  globalThis.setTimeout = timers.setTimeout = setTimeoutFaster;
  globalThis.setInterval = timers.setInterval = setIntervalFaster;
  const sleep = timersPromises.setTimeout;
  const every = timersPromises.setInterval;
  timersPromises.setTimeout = (ms, ...rest) => sleep(shrink(ms), ...rest);
  timersPromises.setInterval = (ms, ...rest) => every(shrink(ms), ...rest);
  // Named imports of the timer modules (import { setTimeout } from 'node:timers/promises') see them too.
  syncBuiltinESMExports();
}
