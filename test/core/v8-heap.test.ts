import { describe, expect, it } from 'vitest';
import { tightenOldGeneration, tuneHeap, YOUNG_CAP_BYTES, type HeapControls } from '../../src/core/v8-heap.js';

/** A V8 the test drives: flags set are recorded, the young generation grows when told, ticks run by hand. */
function fakeHeap(): HeapControls & { flags: string[]; young: number; tick(): void; timers: number } {
  const ticks = new Set<() => void>();
  const heap = {
    flags: [] as string[],
    young: 1024 * 1024,
    setFlag: (flag: string) => heap.flags.push(flag),
    youngGenerationBytes: () => heap.young,
    every(_ms: number, tick: () => void) {
      ticks.add(tick);
      return () => ticks.delete(tick);
    },
    tick: () => [...ticks].forEach((tick) => tick()),
    get timers() {
      return ticks.size;
    },
  };
  return heap;
}

describe('tuneHeap', () => {
  it('limits the old generation at once and stops the young one growing once it reaches the cap', () => {
    const heap = fakeHeap();
    expect(tuneHeap(['--enable-source-maps'], '--max-old-space-size=4096', heap)).toEqual(['--heap-growing-percent=100', '--semi-space-growth-factor=1']);
    expect(heap.flags).toEqual(['--heap-growing-percent=100']);
    heap.young = YOUNG_CAP_BYTES / 2;
    heap.tick();
    expect(heap.flags).toEqual(['--heap-growing-percent=100']);
    heap.young = YOUNG_CAP_BYTES;
    heap.tick();
    expect(heap.flags).toEqual(['--heap-growing-percent=100', '--semi-space-growth-factor=1']);
    // Set once: the watch stops.
    expect(heap.timers).toBe(0);
  });

  it.each([
    [['--max-semi-space-size=8'], '', ['--heap-growing-percent=100']],
    [[], '--trace-gc --semi_space_growth_factor=2', ['--heap-growing-percent=100']],
    [['--heap-growing-percent=50'], '', ['--semi-space-growth-factor=1']],
    [['--heap_growing_percent=50', '--min-semi-space-size=4'], '', []],
    [[], '--heap-growing-percent=300 --max-semi-space-size=2', []],
  ])('leaves what is given on the command line (%j, NODE_OPTIONS %j) alone', (execArgv, nodeOptions, expected) => {
    const heap = fakeHeap();
    expect(tuneHeap(execArgv, nodeOptions, heap)).toEqual(expected);
    heap.young = YOUNG_CAP_BYTES * 4;
    heap.tick();
    expect(heap.flags).toEqual(expected);
  });
});

describe('tightenOldGeneration', () => {
  it('allows the old generation less growth for the last pass, unless a growth was given', () => {
    const heap = fakeHeap();
    expect(tightenOldGeneration(['--enable-source-maps'], '', heap)).toBe(true);
    expect(heap.flags).toEqual(['--heap-growing-percent=40']);
    const chosen = fakeHeap();
    expect(tightenOldGeneration([], '--heap_growing_percent=300', chosen)).toBe(false);
    expect(chosen.flags).toEqual([]);
  });
});
