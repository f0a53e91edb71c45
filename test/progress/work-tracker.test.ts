import { describe, expect, it } from 'vitest';
import type { WorkProgress } from '../../src/core/counted-work.js';
import { WorkTracker } from '../../src/progress/work-tracker.js';

/** A tracker on a clock the test moves; `at` sets the time of the next sample. */
function tracked(): {
  tracker: WorkTracker;
  at: (ms: number, progress?: WorkProgress) => ReturnType<WorkTracker['sample']>;
} {
  let now = 0;
  const tracker = new WorkTracker(() => now);
  return {
    tracker,
    at: (ms, progress) => {
      now = ms;
      return tracker.sample(progress);
    },
  };
}

describe('WorkTracker', () => {
  it('before any report: the time only', () => {
    const { at } = tracked();
    expect(at(2_000)).toEqual({
      step: null,
      done: 0,
      total: null,
      percent: null,
      perSecond: null,
      etaMs: null,
      elapsedMs: 2_000,
    });
  });

  it.each([
    { label: 'no total: a count, no percent, no time left', total: null, done: 50, percent: null, etaMs: null },
    { label: 'a total: percent and the time left at the rate so far', total: 200, done: 50, percent: 25, etaMs: 3_000 },
    { label: 'done: 100% and nothing left', total: 200, done: 200, percent: 100, etaMs: 0 },
    { label: 'past its total (an estimate short): 100%, nothing left', total: 40, done: 50, percent: 100, etaMs: 0 },
    { label: 'an empty total is done', total: 0, done: 0, percent: 100, etaMs: 0 },
  ])('$label', ({ total, done, percent, etaMs }) => {
    const { at } = tracked();
    at(0, { step: 'entries', done: 0, total });
    const snapshot = at(1_000, { step: 'entries', done, total });
    expect(snapshot.percent).toBe(percent);
    expect(snapshot.etaMs).toBe(etaMs);
  });

  it('the time left counts down with a steady rate', () => {
    const { at } = tracked();
    at(0, { step: 'entries', done: 0, total: 1_000 });
    const lefts = [1, 2, 3, 4, 5].map((s) => at(s * 1_000, { step: 'entries', done: s * 100, total: 1_000 }).etaMs);
    expect(lefts).toEqual([9_000, 8_000, 7_000, 6_000, 5_000]);
  });

  it('a new step starts its rate afresh: the rate of the one before says nothing of it', () => {
    const { at } = tracked();
    at(0, { step: 'bodies', done: 0, total: 1_000 });
    expect(at(1_000, { step: 'bodies', done: 1_000, total: 1_000 }).perSecond).toBe(1_000);
    // The first sample of the new step: no rate yet, so no time left rather than one from the bodies' pace.
    const first = at(2_000, { step: 'check', done: 10, total: 1_000 });
    expect(first).toMatchObject({ step: 'check', perSecond: null, etaMs: null, percent: 1, elapsedMs: 2_000 });
    expect(at(3_000, { step: 'check', done: 110, total: 1_000 })).toMatchObject({ perSecond: 100, etaMs: 8_900 });
  });
});
