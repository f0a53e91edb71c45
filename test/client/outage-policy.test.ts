import { describe, expect, it } from 'vitest';
import { RabbitError } from '../../src/core/errors.js';
import {
  answersAsService,
  extendStreak,
  judgeStreak,
  nextProbeAt,
  NO_STREAK,
  OUTAGE_DEFAULTS,
  outageSignalOf,
  probeDelay,
  type OutagePolicy,
  type Streak,
} from '../../src/client/outage-policy.js';

const policy: OutagePolicy = { ...OUTAGE_DEFAULTS };

function streakOf(...sources: string[]): Streak {
  return sources.reduce((streak, source) => extendStreak(streak, source), NO_STREAK);
}

describe('outageSignalOf: what a failure says about the service as a whole', () => {
  it.each([
    ['connection refused or reset', new RabbitError('NETWORK', 'x'), 'transport'],
    ['timeout', new RabbitError('TIMEOUT', 'x'), 'transport'],
    ['body cut short', new RabbitError('BODY_TRUNCATED', 'x'), 'transport'],
    ['502', new RabbitError('HTTP_STATUS', 'x', { status: 502 }), 'gateway'],
    ['503', new RabbitError('HTTP_STATUS', 'x', { status: 503 }), 'gateway'],
    ['504', new RabbitError('HTTP_STATUS', 'x', { status: 504 }), 'gateway'],
    ['503 with Retry-After', new RabbitError('HTTP_STATUS', 'x', { status: 503, retryAfterMs: 5000 }), 'throttle'],
    ['429', new RabbitError('HTTP_STATUS', 'x', { status: 429 }), 'throttle'],
    ['500: the application answered', new RabbitError('HTTP_STATUS', 'x', { status: 500 }), null],
    ['404', new RabbitError('HTTP_STATUS', 'x', { status: 404 }), null],
    ['a stalled body: that resource, not the service', new RabbitError('STALLED', 'x'), null],
    ['malformed JSON', new RabbitError('BAD_JSON', 'x'), null],
  ])('%s', (_name, failure, expected) => {
    expect(outageSignalOf(failure)).toBe(expected);
  });

  it.each([
    [200, true],
    [304, true],
    [403, true],
    [500, true],
    [429, false],
    [502, false],
    [503, false],
    [504, false],
  ])('a probe answered %i: back = %s', (status, back) => {
    expect(answersAsService(status)).toBe(back);
  });
});

describe('judgeStreak: when the run pauses as a whole', () => {
  it.each<[string, Streak, boolean, OutagePolicy, string]>([
    ['no failures', NO_STREAK, true, policy, 'go-on'],
    ['two failures of two resources', streakOf('a', 'b'), true, policy, 'go-on'],
    ['three failures of three resources', streakOf('a', 'b', 'c'), true, policy, 'outage'],
    ['three failures of two resources', streakOf('a', 'a', 'b'), true, policy, 'outage'],
    ['three failures, all of one resource: ask another', streakOf('a', 'a', 'a'), true, policy, 'probe'],
    ['many failures before the service ever answered', streakOf('a', 'b', 'c', 'd'), false, policy, 'go-on'],
    ['patience 0: today’s behaviour', streakOf('a', 'b', 'c'), true, { ...policy, patienceMs: 0 }, 'go-on'],
    ['a stricter policy', streakOf('a', 'b', 'c'), true, { ...policy, failuresInARow: 4 }, 'go-on'],
  ])('%s', (_name, streak, answeredOnce, rules, verdict) => {
    expect(judgeStreak(streak, answeredOnce, rules)).toBe(verdict);
  });

  // The service's very first answer is a Retry-After (429 or 503): reached, and asked to wait.
  it.each<[string, Streak, boolean, OutagePolicy, string]>([
    ['before any answer: an outage at once', streakOf('a'), false, policy, 'outage'],
    ['patience 0: still today’s behaviour', streakOf('a'), false, { ...policy, patienceMs: 0 }, 'go-on'],
    ['after an answer: the streak decides, as for any failure', streakOf('a'), true, policy, 'go-on'],
  ])('asked to wait, %s', (_name, streak, answeredOnce, rules, verdict) => {
    expect(judgeStreak(streak, answeredOnce, rules, true)).toBe(verdict);
  });

  it('keeps no more resources than the verdict needs', () => {
    const streak = ['a', 'b', 'c', 'd'].reduce((s, source) => extendStreak(s, source, 2), NO_STREAK);
    expect(streak.failures).toBe(4);
    expect([...streak.sources]).toEqual(['a', 'b']);
  });

  it('counts each resource once, however often it failed', () => {
    expect(streakOf('a', 'b', 'a', 'b')).toMatchObject({ failures: 4 });
    expect(streakOf('a', 'b', 'a', 'b').sources.size).toBe(2);
  });
});

describe('probeDelay and nextProbeAt: how a paused run waits', () => {
  it.each([
    [1, undefined, 1_000],
    [2, undefined, 2_000],
    [3, undefined, 4_000],
    [5, undefined, 16_000],
    [6, undefined, 30_000],
    [20, undefined, 30_000],
    [1, 12_000, 12_000],
    [6, 12_000, 30_000],
    [1, 3_600_000, 60_000],
  ])('probe %i with Retry-After %s waits %i ms', (probe, retryAfter, delay) => {
    expect(probeDelay(probe, policy, retryAfter)).toBe(delay);
  });

  it.each([
    ['early in the outage', 0, 10_000, 3, 14_000],
    ['near the end of patience: the last probe is made as it runs out', 0, 595_000, 5, 600_000],
    ['patience spent', 0, 600_000, 7, null],
  ])('%s', (_name, since, now, probe, at) => {
    expect(nextProbeAt(since, now, probe, policy)).toBe(at);
  });
});
