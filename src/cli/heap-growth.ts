import { setFlagsFromString } from 'node:v8';

/**
 * How far past what was live at its last full collection V8 lets the heap grow, in per cent.
 * Left to itself V8 lets it grow up to four times the live size when collecting looks cheap. An
 * export allocates fast and keeps little (20 to 40 MiB live at any size of account), so most of
 * its peak was garbage waiting for a collection: the old space climbed to 120 MiB between
 * collections that left 30. At 1.3 times the live size, the peak of an export of 220,000
 * resources in 1,800 prototypes fell from about 300 to under 200 MiB, for the CPU of a few more
 * collections (see docs/benchmarks.md).
 *
 * A plain number V8 reads each time it sets the next limit, so setting it as the process starts
 * is safe; on a V8 without the flag this prints a warning and changes nothing.
 */
const HEAP_GROWING_PERCENT = 30;

export function keepHeapNearLive(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
