import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from '../../src/cli/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('sets the growth limit when nobody chose one', () => {
    expect(limitHeapGrowth(['--enable-source-maps'], '--max-old-space-size=4096')).toBe(true);
  });

  it.each([
    [['--heap-growing-percent=50'], ''],
    [['--heap_growing_percent=50'], ''],
    [[], '--trace-warnings --heap-growing-percent=300'],
  ])('leaves a growth limit given on the command line (%j, NODE_OPTIONS %j) alone', (execArgv, nodeOptions) => {
    expect(limitHeapGrowth(execArgv, nodeOptions)).toBe(false);
  });
});
