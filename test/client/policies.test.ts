import { describe, expect, it } from 'vitest';
import {
  RETRY_DEFAULTS,
  isRetryableStatus,
  mayRetry,
  parseRetryAfter,
  retryDelay,
} from '../../src/client/retry-policy.js';
import { AdaptiveConcurrency } from '../../src/client/adaptive-concurrency.js';
import { RateLimiter } from '../../src/client/rate-limiter.js';

const policy = { ...RETRY_DEFAULTS };
const NOW = Date.UTC(2026, 10, 22, 3, 0, 0);

describe('retry policy', () => {
  it.each([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [408, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [410, false],
    [501, false],
  ])('status %i is retryable: %s', (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected);
  });

  it.each([
    ['3', 3000],
    [' 0 ', 0],
    [new Date(NOW + 5000).toUTCString(), 5000],
    [new Date(NOW - 5000).toUTCString(), 0],
    ['soon', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    [undefined, undefined],
  ])('Retry-After %j is %j ms', (header, expected) => {
    expect(parseRetryAfter(header, NOW)).toBe(expected);
  });

  it.each([
    // attempt, random, retryAfter, expected
    [1, 0.5, undefined, 125],
    [2, 0.5, undefined, 250],
    [3, 0.999, undefined, 999],
    [20, 0.5, undefined, policy.maxDelayMs / 2],
    [1, 0, undefined, 0],
    [1, 0.5, 3000, 3000],
    [5, 0.999, 10, 3996],
    [1, 0.5, 10 * 60_000, policy.maxRetryAfterMs],
  ])('after attempt %i with random %d and Retry-After %j waits %i ms', (attempt, random, retryAfter, expected) => {
    expect(retryDelay(attempt, policy, () => random, retryAfter)).toBe(expected);
  });

  it('stops at the attempt count and at the total waiting budget', () => {
    expect(mayRetry(4, 0, 100, policy)).toBe(true);
    expect(mayRetry(5, 0, 100, policy)).toBe(false);
    expect(mayRetry(1, policy.maxTotalWaitMs - 50, 100, policy)).toBe(false);
  });
});

describe('adaptive concurrency', () => {
  it('halves on throttling at most once per cool-down and climbs back one per healthy round', () => {
    let clock = 0;
    const seen: number[] = [];
    const aimd = new AdaptiveConcurrency(
      16,
      (value) => seen.push(value),
      () => clock,
      1000,
    );
    aimd.throttled();
    aimd.throttled(); // same burst: no second halving
    expect(aimd.value).toBe(8);
    clock += 1000;
    aimd.throttled();
    expect(aimd.value).toBe(4);
    for (let i = 0; i < 4; i++) aimd.succeeded();
    expect(aimd.value).toBe(5);
    for (let i = 0; i < 1000; i++) aimd.succeeded();
    expect(aimd.value).toBe(16);
    expect(seen).toEqual([8, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  });

  it('never goes below one', () => {
    let clock = 0;
    const aimd = new AdaptiveConcurrency(
      2,
      () => undefined,
      () => clock,
      10,
    );
    for (let i = 0; i < 5; i++) {
      clock += 10;
      aimd.throttled();
    }
    expect(aimd.value).toBe(1);
  });
});

describe('rate limiter', () => {
  it('spaces requests evenly at the given rate', async () => {
    let clock = 1_000;
    const waits: number[] = [];
    // The fake wait lets its time pass on the fake clock, as a real one would.
    const limiter = new RateLimiter(
      20,
      () => clock,
      async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    ); // 50 ms apart
    for (let i = 0; i < 4; i++) await limiter.take();
    // The first goes at once, each further one waits its 50 ms turn.
    expect(waits).toEqual([50, 50, 50]);
    clock += 500;
    await limiter.take();
    // After a pause longer than the interval there is nothing to wait for: no burst is saved up.
    expect(waits).toEqual([50, 50, 50]);
    await limiter.take();
    expect(waits).toEqual([50, 50, 50, 50]);
  });
});
