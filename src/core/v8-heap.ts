import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * How V8 sizes its heap for this tool, set once at start-up for every command.
 *
 * An export, and any reader of a big archive, allocates fast and keeps little: tens of kilobytes
 * of short-lived objects per request or per manifest entry, with ~20 MiB actually live. Left to
 * itself V8 doubles the young generation up to 2 x 16 MiB semi-spaces and keeps it, and lets the
 * old generation grow to up to 4x what survived its last full collection: a 30k-resource export
 * peaked at 160 MiB RSS, a third of it heap that held garbage. Measured with `npm run bench`
 * (30k-resource export, 2-core machine, CPU per request / peak RSS):
 * - V8's defaults: 221-253 us, 160-163 MiB;
 * - old generation allowed 2x its live size: +5-15 % CPU, 134-135 MiB;
 * - that, and the young generation kept at its starting 1 MiB: +20-25 % CPU, 106-122 MiB;
 * - that, but the young generation stopped at 8 MiB instead: CPU as V8's defaults, 109-112 MiB.
 * The last is what this does. Both settings are read by V8 each time it sizes the heap, so they
 * take effect when set at run time (`--max-semi-space-size`, by contrast, is fixed when the heap
 * is set up): the young generation is left to grow until it reaches YOUNG_CAP_BYTES, then its
 * growth factor is set to 1. A setting given on the command line or in NODE_OPTIONS wins.
 */
export const YOUNG_CAP_BYTES = 8 * 1024 * 1024;
const OLD_GROWTH = '--heap-growing-percent=100';
const YOUNG_STOP = '--semi-space-growth-factor=1';
const CHECK_MS = 50;

/** What of V8 this needs; tests pass a fake. */
export interface HeapControls {
  setFlag(flag: string): void;
  youngGenerationBytes(): number;
  every(ms: number, tick: () => void): () => void;
}

const NODE_HEAP: HeapControls = {
  setFlag: setFlagsFromString,
  youngGenerationBytes: () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    // Never what keeps the process alive.
    timer.unref();
    return () => clearInterval(timer);
  },
};

/**
 * For the last pass of an export (manifest.json, one prototype's entries at a time): it makes
 * garbage faster than the crawl and keeps little, and at a million resources the old generation's
 * swing above its live size made the run's peak. Allowing it 1.4x instead of 2x there took a
 * 999,198-resource export from 157-162 to 147 MiB peak RSS, with that pass no slower (12.5 s
 * against 12.9-14.4). Like the rest, a setting given on the command line wins.
 */
export function tightenOldGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env['NODE_OPTIONS'] ?? '',
  heap: Pick<HeapControls, 'setFlag'> = NODE_HEAP,
): boolean {
  if (givenFlags(execArgv, nodeOptions).some((arg) => arg.startsWith('--heap-growing-percent'))) return false;
  heap.setFlag(LAST_PASS_OLD_GROWTH);
  return true;
}

const LAST_PASS_OLD_GROWTH = '--heap-growing-percent=40';

function givenFlags(execArgv: readonly string[], nodeOptions: string): string[] {
  return [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
}

/** Applies the settings nobody chose otherwise; returns the flags set now or scheduled. */
export function tuneHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env['NODE_OPTIONS'] ?? '',
  heap: HeapControls = NODE_HEAP,
): string[] {
  const given = givenFlags(execArgv, nodeOptions);
  const applied: string[] = [];
  if (!given.some((arg) => arg.startsWith('--heap-growing-percent'))) {
    heap.setFlag(OLD_GROWTH);
    applied.push(OLD_GROWTH);
  }
  if (!given.some((arg) => /^--(?:max-|min-)?semi-space/.test(arg))) {
    const stop = heap.every(CHECK_MS, () => {
      if (heap.youngGenerationBytes() < YOUNG_CAP_BYTES) return;
      heap.setFlag(YOUNG_STOP);
      stop();
    });
    applied.push(YOUNG_STOP);
  }
  return applied;
}
