import { describe, expect, it } from 'vitest';
import { tuneHeap } from '../../src/core/v8-heap.js';

describe('tuneHeap', () => {
  it('keeps the young generation small and the old one near its live size when nobody chose otherwise', () => {
    expect(tuneHeap(['--enable-source-maps'], '--max-old-space-size=4096 --trace-warnings')).toEqual([
      '--semi-space-growth-factor=1',
      '--heap-growing-percent=100',
    ]);
  });

  it.each([
    [['--max-semi-space-size=8'], '', ['--heap-growing-percent=100']],
    [[], '--trace-gc --semi_space_growth_factor=2', ['--heap-growing-percent=100']],
    [['--heap-growing-percent=50'], '', ['--semi-space-growth-factor=1']],
    [['--heap_growing_percent=50', '--min-semi-space-size=4'], '', []],
    [[], '--heap-growing-percent=300 --max-semi-space-size=2', []],
  ])('leaves what is given on the command line (%j, NODE_OPTIONS %j) alone', (execArgv, nodeOptions, expected) => {
    expect(tuneHeap(execArgv, nodeOptions)).toEqual(expected);
  });
});
