import { describe, expect, it } from 'vitest';
import { barLine, duration, finalLine, logLine, phaseLine, progressRecord } from '../../src/cli/progress-line.js';
import { parseStatsInterval } from '../../src/cli/progress-flags.js';
import type { ProgressSnapshot } from '../../src/progress/tracker.js';

const snap: ProgressSnapshot = {
  phase: 'crawl',
  percent: 45.2,
  done: 1234,
  total: 2740,
  requests: 1250,
  queued: 40,
  bytes: 50 * 1024 * 1024,
  wireBytes: 50 * 1024 * 1024,
  requestsPerSecond: 85.4,
  bytesPerSecond: 2.1 * 1024 * 1024,
  etaMs: 185_000,
  prototypesDone: 3,
  prototypesTotal: 12,
  retries: 2,
  errors: 1,
  elapsedMs: 14_000,
  outage: null,
};

describe('duration', () => {
  it.each([
    [0, '0s'],
    [45_400, '45s'],
    [185_000, '3m05s'],
    [3_599_000, '59m59s'],
    [7_500_000, '2h05m'],
    [3 * 86_400_000 + 4 * 3_600_000, '3d04h'],
  ])('%i ms reads %s', (ms, text) => {
    expect(duration(ms)).toBe(text);
  });
});

describe('barLine', () => {
  it('holds every figure on a wide terminal', () => {
    expect(barLine(snap, 160)).toBe(
      'crawl 45% [#############-----------------] 1234/~2740 85 req/s 2.1 MiB/s 3m05s left 3/12 prototypes 2 retries 1 resource failed',
    );
  });

  const WIDTHS = [200, 120, 100, 80, 60, 40, 30, 20, 12, 8];

  it.each(WIDTHS)('fits %i columns on one line', (columns) => {
    const line = barLine(snap, columns);
    expect(line.length).toBeLessThanOrEqual(columns);
    expect(line).not.toContain('\n');
  });

  it.each(WIDTHS.filter((columns) => columns >= 12))('keeps the percent in %i columns', (columns) => {
    expect(barLine(snap, columns)).toMatch(/45%/);
  });

  it.each(WIDTHS.filter((columns) => columns >= 20))('keeps the time left in %i columns', (columns) => {
    expect(barLine(snap, columns)).toContain('3m05s left');
  });

  it('leaves out the least needed first', () => {
    const line = barLine(snap, 80);
    expect(line).toContain('1 resource failed'); // failures matter once there are any
    expect(line).not.toContain('MiB/s');
  });

  it('shows dashes before anything is known', () => {
    const line = barLine(
      {
        ...snap,
        phase: 'starting',
        percent: null,
        total: null,
        requestsPerSecond: null,
        bytesPerSecond: null,
        etaMs: null,
        prototypesTotal: null,
      },
      120,
    );
    expect(line).toMatch(/^starting --% \[-+\] 1234 -- req\/s -- MiB\/s -- left 3\/\? prototypes/);
  });
});

describe('logLine and progressRecord', () => {
  it('name every figure', () => {
    expect(logLine(snap)).toBe(
      'progress: crawl 45%, 1234/~2740 resources, 85.4 req/s, 2.10 MiB/s, 3m05s left, 3/12 prototypes, ' +
        '1250 requests made, 40 requests not started, 50.0 MiB, 2 retries, 1 resource failed, 14s elapsed',
    );
    expect(progressRecord(snap)).toEqual({
      phase: 'crawl',
      percent: 45.2,
      done: 1234,
      total: 2740,
      requests: 1250,
      requestsNotStarted: 40,
      bytes: 50 * 1024 * 1024,
      wireBytes: 50 * 1024 * 1024,
      requestsPerSecond: 85.4,
      bytesPerSecond: Math.round(2.1 * 1024 * 1024),
      etaSeconds: 185,
      prototypesDone: 3,
      prototypesTotal: 12,
      retries: 2,
      errors: 1,
      elapsedSeconds: 14,
      outage: null,
    });
    // Compressed answers: the bodies stored and what they took on the wire.
    expect(logLine({ ...snap, wireBytes: 12 * 1024 * 1024 })).toContain(
      '1250 requests made, 40 requests not started, 50.0 MiB stored, 12.0 MiB on the wire, 2 retries',
    );
    expect(progressRecord({ ...snap, wireBytes: 12 * 1024 * 1024 })).toMatchObject({
      bytes: 50 * 1024 * 1024,
      wireBytes: 12 * 1024 * 1024,
    });
    expect(
      phaseLine({
        crawlMs: 12_340,
        requisitesMs: 1000,
        writingMs: 200,
        requestsPerSecond: 85.25,
        bytesPerSecond: 2 * 1024 * 1024,
      }),
    ).toBe('crawl 12.3 s, requisites 1.0 s, writing 0.2 s; 85.3 req/s, 2.00 MiB/s on average');
  });
});

describe('finalLine', () => {
  it('is the whole run: average rates and time elapsed, no percent and no time left', () => {
    const done = { ...snap, phase: 'done' as const, percent: 100, etaMs: 0, queued: 0, errors: 3, elapsedMs: 252_000 };
    const times = {
      crawlMs: 240_000,
      requisitesMs: 5000,
      writingMs: 7000,
      requestsPerSecond: 5.1,
      bytesPerSecond: 214_000,
    };
    const line = finalLine(done, times);
    expect(line).toBe(
      'progress: done, 1234 resources, 1250 requests made, 5.1 req/s and 0.20 MiB/s on average, 3/12 prototypes, ' +
        '50.0 MiB, 2 retries, 3 resources failed, 4m12s elapsed',
    );
    expect(line).not.toMatch(/--|%|left/);
  });
});

describe('parseStatsInterval', () => {
  it.each([
    ['30', 30_000],
    ['1s', 1000],
    ['2.5s', 2500],
    ['500ms', 500],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['0', 0],
  ])('%s is %i ms', (text, ms) => {
    expect(parseStatsInterval(text)).toBe(ms);
  });

  it.each(['', 'soon', '-1s', '10ms', '2d', '25h', '1 s s'])('refuses %j', (text) => {
    expect(() => parseStatsInterval(text)).toThrow(/--stats-interval/);
  });
});
