import { describe, expect, it } from 'vitest';
import { inOrder, readAhead } from '../../src/core/in-order.js';

/** A start function whose results the test settles by hand, in any order. */
function manual() {
  const started: { item: number; resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  let running = 0;
  let peak = 0;
  const start = (item: number): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      running++;
      peak = Math.max(peak, running);
      started.push({
        item,
        resolve: (value) => {
          running--;
          resolve(value);
        },
        reject: (error) => {
          running--;
          reject(error);
        },
      });
    });
  return { started, start, peak: () => peak };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('inOrder', () => {
  it('hands results back in the items order however they finish, with at most `ahead` started', async () => {
    const work = manual();
    const seen: [number, string][] = [];
    const consumer = (async () => {
      for await (const pair of inOrder([0, 1, 2, 3, 4, 5], 3, work.start)) seen.push(pair);
    })();
    await tick();
    expect(work.started.map((s) => s.item)).toEqual([0, 1, 2]);
    // The third and second finish before the first: nothing is handed back yet.
    work.started[2]?.resolve('c');
    work.started[1]?.resolve('b');
    await tick();
    expect(seen).toEqual([]);
    work.started[0]?.resolve('a');
    await tick();
    expect(seen).toEqual([
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    expect(work.started.map((s) => s.item)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const s of work.started.slice(3)) s.resolve(String(s.item));
    await consumer;
    expect(seen.map(([item]) => item)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(work.peak()).toBeLessThanOrEqual(3);
  });

  it('surfaces a failure at its turn, after the items before it, and never as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const work = manual();
      const seen: number[] = [];
      const consumer = (async () => {
        for await (const [item] of inOrder([0, 1, 2], 3, work.start)) seen.push(item);
      })();
      await tick();
      work.started[1]?.reject(new Error('read of 1 failed'));
      await tick();
      await tick();
      expect(seen).toEqual([]);
      work.started[0]?.resolve('a');
      await expect(consumer).rejects.toThrow('read of 1 failed');
      expect(seen).toEqual([0]);
      work.started[2]?.resolve('c');
      await tick();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('gives nothing for no items and runs one at a time when asked for fewer than one ahead', async () => {
    const none: unknown[] = [];
    for await (const pair of inOrder([], 4, async () => 'x')) none.push(pair);
    expect(none).toEqual([]);
    let running = 0;
    let peak = 0;
    const out: number[] = [];
    for await (const [, value] of inOrder([1, 2, 3], 0, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await tick();
      running--;
      return n * 10;
    }))
      out.push(value);
    expect(out).toEqual([10, 20, 30]);
    expect(peak).toBe(1);
  });
});

describe('readAhead', () => {
  it('starts nothing until asked, keeps `ahead` started before each result it hands over, and ends', async () => {
    const work = manual();
    const results = readAhead([0, 1, 2, 3], 2, work.start);
    expect(work.started).toEqual([]);
    const first = results.next();
    expect(work.started.map((s) => s.item)).toEqual([0, 1]);
    work.started[0]?.resolve('a');
    expect(await first).toBe('a');
    const second = results.next();
    expect(work.started.map((s) => s.item)).toEqual([0, 1, 2]);
    work.started[1]?.resolve('b');
    work.started[2]?.resolve('c');
    expect(await second).toBe('b');
    expect(await results.next()).toBe('c');
    work.started[3]?.resolve('d');
    expect(await results.next()).toBe('d');
    expect(results.next()).toBeUndefined();
    expect(work.peak()).toBeLessThanOrEqual(2);
  });
});
