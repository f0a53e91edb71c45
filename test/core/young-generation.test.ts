import { describe, expect, it } from 'vitest';
import { keepYoungGenerationSmall } from '../../src/core/young-generation.js';

describe('keepYoungGenerationSmall', () => {
  it('leaves a semi-space setting given on the command line or in NODE_OPTIONS alone', () => {
    expect(keepYoungGenerationSmall(['--max-semi-space-size=8'], '')).toBe(false);
    expect(keepYoungGenerationSmall([], '--trace-gc --semi_space_growth_factor=2')).toBe(false);
    expect(keepYoungGenerationSmall(['--max-old-space-size=200'], '--trace-gc')).toBe(true);
  });
});
