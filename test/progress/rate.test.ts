import { describe, expect, it } from 'vitest';
import { halfLifeFor, startRate, timeLeftMs, updateRate, type RateState } from '../../src/progress/rate.js';

describe('updateRate', () => {
  it.each([
    { label: 'nothing before the warm-up has passed', state: startRate(0), at: 500, count: 10, perSecond: null },
    { label: 'the first rate is the plain average', state: startRate(0), at: 1000, count: 20, perSecond: 20 },
    { label: 'the first rate after a slow start', state: startRate(0, 5), at: 4000, count: 45, perSecond: 10 },
    // One half-life later half the weight is on the new rate.
    {
      label: 'a half-life moves it half way',
      state: { at: 1000, count: 20, perSecond: 20 },
      at: 11_000,
      count: 420,
      perSecond: 30,
    },
    {
      label: 'two half-lives move it three quarters',
      state: { at: 0, count: 0, perSecond: 100 },
      at: 20_000,
      count: 0,
      perSecond: 25,
    },
    {
      label: 'a short sample moves it little',
      state: { at: 0, count: 0, perSecond: 100 },
      at: 100,
      count: 0,
      perSecond: 100 * 2 ** (-100 / 10_000),
    },
    { label: 'no time passed: unchanged', state: { at: 5, count: 1, perSecond: 7 }, at: 5, count: 9, perSecond: 7 },
  ] as Array<{ label: string; state: RateState; at: number; count: number; perSecond: number | null }>)(
    '$label',
    ({ state, at, count, perSecond }) => {
      const next = updateRate(state, at, count);
      expect(next.perSecond).toEqual(perSecond === null ? null : expect.closeTo(perSecond, 6));
    },
  );

  it('settles on a steady rate whatever the sampling interval', () => {
    for (const step of [200, 1000, 30_000]) {
      let state = startRate(0);
      for (let at = step; at <= 300_000; at += step) state = updateRate(state, at, at * 0.05);
      expect(state.perSecond).toBeCloseTo(50, 6);
    }
  });
});

describe('timeLeftMs', () => {
  it.each([
    { remaining: 100, perSecond: 20, left: 5000 },
    { remaining: 3600, perSecond: 1, left: 3_600_000 },
    { remaining: 100, perSecond: null, left: null },
    { remaining: 100, perSecond: 0, left: null },
    { remaining: -5, perSecond: 10, left: 0 },
  ])('$remaining at $perSecond/s: $left ms', ({ remaining, perSecond, left }) => {
    expect(timeLeftMs(remaining, perSecond)).toBe(left);
  });
});

describe('halfLifeFor', () => {
  it.each([
    { elapsed: 0, halfLife: 1000 },
    { elapsed: 8000, halfLife: 2000 },
    { elapsed: 40_000, halfLife: 10_000 },
    { elapsed: 3_600_000, halfLife: 10_000 },
  ])('after $elapsed ms: $halfLife ms', ({ elapsed, halfLife }) => {
    expect(halfLifeFor(elapsed)).toBe(halfLife);
  });
});
