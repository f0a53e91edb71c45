import { setTimeout as realSleep } from 'node:timers/promises';

/**
 * A clock that runs with the real one but skips the waits: an export given its `sleep` waits a
 * hundredth of what it asked (so concurrent waits still end in their order, and sockets get their
 * turns), then the clock jumps to where the full wait would have ended. A fake service and a
 * deadline given its `now` and `timer` see those jumps, so a 20 s outage is waited out in a
 * fraction of a second, and what the run saw is read off the clock, never off the wall.
 */
export interface SkippingClock {
  now: () => number;
  /** The run's waits (backoffs, probes); rejects when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Calls `fire` once the clock has passed `ms` from now (by real time or by a skip); returns a cancel. */
  timer: (ms: number, fire: () => void) => () => void;
  /** Moves the clock on by `ms` at once, as if that much time had passed. */
  skip: (ms: number) => void;
  /** Every wait the run asked for, in milliseconds, in order. */
  readonly slept: number[];
  /** Time skipped so far: how much of the run's time it did not wait for. */
  readonly skipped: number;
}

const SCALE = 100;

/**
 * `scale`: how many times shorter the real wait is than the one asked for. A run that waits one
 * request at a time (restore) has no order among waits to keep, and can skip almost all of it.
 */
export function skippingClock(scale = SCALE): SkippingClock {
  let offset = 0;
  const slept: number[] = [];
  const timers = new Set<{ due: number; fire: () => void; real: NodeJS.Timeout }>();
  const now = (): number => Date.now() + offset;
  const fireDue = (): void => {
    for (const timer of [...timers].filter((t) => t.due <= now()).sort((a, b) => a.due - b.due)) {
      timers.delete(timer);
      clearTimeout(timer.real);
      timer.fire();
    }
  };
  const moveTo = (at: number): void => {
    if (at > now()) offset += at - now();
    fireDue();
  };
  return {
    now,
    slept,
    get skipped() {
      return offset;
    },
    async sleep(ms, signal) {
      slept.push(ms);
      const until = now() + ms;
      await realSleep(Math.floor(ms / scale), undefined, signal ? { signal } : {});
      moveTo(until);
    },
    timer(ms, fire) {
      const timer = { due: now() + ms, fire, real: setTimeout(() => moveTo(timer.due), ms) };
      timer.real.unref();
      timers.add(timer);
      return () => {
        timers.delete(timer);
        clearTimeout(timer.real);
      };
    },
    skip(ms) {
      moveTo(now() + ms);
    },
  };
}
