import { describe, expect, it } from 'vitest';
import { workBar, workLine, type WorkWords } from '../../src/cli/work-line.js';
import type { WorkSnapshot } from '../../src/progress/work-tracker.js';

const WORDS: WorkWords = {
  entries: { verb: 'checked', unit: 'entries' },
  file: { verb: 'hashed the whole file:', unit: 'bytes' },
  finish: { verb: 'writing the package', unit: null },
};

const snap = (over: Partial<WorkSnapshot>): WorkSnapshot => ({
  step: 'entries',
  done: 1234,
  total: 2740,
  percent: 45.04,
  perSecond: 30,
  etaMs: 185_000,
  elapsedMs: 40_000,
  ...over,
});

describe('workLine: the plain line of a log', () => {
  it.each([
    [snap({}), 'progress: checked 1234 of 2740 entries (45%), 3m05s left, 40s elapsed'],
    [snap({ etaMs: null }), 'progress: checked 1234 of 2740 entries (45%), time left not known yet, 40s elapsed'],
    [snap({ total: null, percent: null, etaMs: null }), 'progress: checked 1234 entries, 40s elapsed'],
    [
      snap({ step: 'file', done: 3 * 2 ** 30, total: 8.5 * 2 ** 30, percent: 35.3 }),
      'progress: hashed the whole file: 3.0 GiB of 8.5 GiB (35%), 3m05s left, 40s elapsed',
    ],
    [snap({ step: 'finish', total: null, percent: null, etaMs: null }), 'progress: writing the package, 40s elapsed'],
    [snap({ step: null, done: 0, total: null, percent: null }), 'progress: starting, 40s elapsed'],
    // A count past its estimate says no more than the whole.
    [
      snap({ done: 2800, percent: 100, etaMs: 0 }),
      'progress: checked 2740 of 2740 entries (100%), 0s left, 40s elapsed',
    ],
  ])('%j', (snapshot, line) => {
    expect(workLine(snapshot, WORDS)).toBe(line);
  });
});

describe('workBar: the terminal line', () => {
  it('percent, bar, count and time left', () => {
    expect(workBar(snap({}), WORDS, 80)).toBe(
      'checked 45% [#############-----------------] 1234/2740 entries 3m05s left',
    );
  });

  it.each([200, 80, 60, 40, 30, 20])('never wider than %i columns, the time left kept longest', (columns) => {
    const line = workBar(snap({}), WORDS, columns);
    expect(line.length).toBeLessThanOrEqual(columns);
    expect(line).toContain('3m05s left');
  });

  it.each([12, 10, 5])('never wider than %i columns', (columns) => {
    expect(workBar(snap({}), WORDS, columns).length).toBeLessThanOrEqual(columns);
  });

  it('without a total: the count and the time it has taken', () => {
    expect(workBar(snap({ total: null, percent: null, etaMs: null }), WORDS, 80)).toBe(
      'checked 1234 entries 40s elapsed',
    );
    expect(workBar(snap({ step: 'finish', total: null, percent: null }), WORDS, 80)).toBe(
      'writing the package 40s elapsed',
    );
  });
});
