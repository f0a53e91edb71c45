import { describe, expect, it } from 'vitest';
import { estimateTotal, shownFraction, type PrototypeTally } from '../../src/progress/estimate.js';

const finished = (done: number, pages = 0): PrototypeTally => ({ done, pages, finished: true });
const visiting = (done: number, previous?: number): PrototypeTally => ({
  done,
  pages: 0,
  finished: false,
  ...(previous !== undefined ? { previous } : {}),
});
const unvisited = (previous?: number): PrototypeTally => visiting(0, previous);
const paged = (done: number, pages: number, pagesListed: number): PrototypeTally => ({
  done,
  pages,
  finished: false,
  pagesListed,
});

describe('estimateTotal', () => {
  it.each([
    {
      label: 'before the list of prototypes is read',
      other: 1,
      prototypes: null,
      done: 1,
      total: null,
      fraction: null,
    },
    {
      label: 'three unvisited, nothing known: the least a prototype costs',
      other: 1,
      prototypes: [unvisited(), unvisited(), unvisited()],
      done: 1,
      total: 13,
      fraction: null,
    },
    {
      label: 'unvisited ones count as the finished average',
      other: 1,
      prototypes: [finished(10, 2), finished(20, 4), unvisited()],
      done: 31,
      total: 46,
      fraction: 31 / 46,
    },
    {
      label: 'one under its guess counts as the guess',
      other: 1,
      prototypes: [finished(10, 2), visiting(3)],
      done: 14,
      total: 21,
      fraction: 14 / 21,
    },
    // 30 resources over 6 pages: one more page costs 5.
    {
      label: 'one that outgrew its guess counts as done plus a page',
      other: 1,
      prototypes: [finished(10, 2), finished(20, 4), visiting(22)],
      done: 53,
      total: 58,
      fraction: 53 / 58,
    },
    {
      label: 'the previous archive sizes each prototype',
      other: 1,
      prototypes: [unvisited(40), unvisited(10)],
      done: 1,
      total: 51,
      fraction: 1 / 51,
    },
    {
      label: 'with nothing finished, new ones count as the previous average',
      other: 1,
      prototypes: [unvisited(40), unvisited(20), unvisited()],
      done: 1,
      total: 91,
      fraction: 1 / 91,
    },
    {
      label: 'the previous size wins over the finished average',
      other: 2,
      prototypes: [finished(10), unvisited(100)],
      done: 12,
      total: 112,
      fraction: 12 / 112,
    },
    {
      label: 'a changed prototype bigger than last time',
      other: 0,
      prototypes: [visiting(45, 40), finished(10, 1)],
      done: 55,
      total: 65,
      fraction: 55 / 65,
    },
    {
      label: 'with nothing finished, the largest seen so far',
      other: 1,
      prototypes: [visiting(9), unvisited()],
      done: 10,
      total: 20,
      fraction: null,
    },
    {
      label: 'whole resources only',
      other: 0,
      prototypes: [finished(10), finished(11), unvisited()],
      done: 21,
      total: 32,
      fraction: 21 / 32,
    },
    // 5 of 20 pages done at 5 resources a page: 100; the unvisited one is taken to be alike.
    {
      label: 'one sized by its own pages before any has finished',
      other: 1,
      prototypes: [paged(25, 5, 20), unvisited()],
      done: 26,
      total: 201,
      fraction: 26 / 201,
    },
    {
      label: 'pages listed but none done yet says nothing',
      other: 1,
      prototypes: [paged(4, 0, 10), unvisited()],
      done: 5,
      total: 10,
      fraction: null,
    },
    {
      label: 'every page seen: what it did plus one page',
      other: 0,
      prototypes: [paged(50, 10, 10), finished(10, 2)],
      done: 60,
      total: 65,
      fraction: 60 / 65,
    },
    {
      label: 'a single prototype of many pages',
      other: 1,
      prototypes: [paged(31, 3, 300)],
      done: 32,
      total: 3101,
      fraction: 32 / 3101,
    },
    {
      label: 'all finished: exact',
      other: 1,
      prototypes: [finished(10, 2), finished(7, 1)],
      done: 18,
      total: 18,
      fraction: 1,
    },
    { label: 'an account without prototypes', other: 1, prototypes: [], done: 1, total: 1, fraction: 1 },
  ])('$label', ({ other, prototypes, done, total, fraction }) => {
    const estimate = estimateTotal({ other, prototypes });
    expect(estimate.done).toBe(done);
    expect(estimate.total).toBe(total);
    expect(estimate.fraction).toEqual(fraction === null ? null : expect.closeTo(fraction, 10));
  });

  it('sharpens as prototypes finish: the error shrinks to nothing', () => {
    const sizes = [30, 34, 26, 31, 29, 35, 25, 30];
    const truth = 1 + sizes.reduce((a, b) => a + b, 0);
    const errors: number[] = [];
    for (let finishedCount = 0; finishedCount <= sizes.length; finishedCount++) {
      const tallies = sizes.map((size, index) => (index < finishedCount ? finished(size, 3) : unvisited()));
      const total = estimateTotal({ other: 1, prototypes: tallies }).total ?? 0;
      errors.push(Math.abs(total - truth) / truth);
    }
    expect(errors[0]).toBeGreaterThan(0.5); // nothing known: four per prototype
    expect(errors[1]).toBeLessThan(0.1); // one finished prototype already says much
    expect(errors.at(-1)).toBe(0);
  });
});

describe('shownFraction', () => {
  it.each([
    { previous: null, estimate: null, shown: null },
    { previous: null, estimate: 0.3, shown: 0.3 },
    { previous: 0.3, estimate: 0.5, shown: 0.5 },
    // A prototype bigger than its guess: the estimate falls back, the bar holds.
    { previous: 0.3, estimate: 0.25, shown: 0.3 },
    { previous: 0.4, estimate: null, shown: 0.4 },
  ])('$previous then $estimate shows $shown', ({ previous, estimate, shown }) => {
    expect(shownFraction(previous, estimate)).toBe(shown);
  });
});
