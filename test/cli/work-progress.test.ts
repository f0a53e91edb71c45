import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workProgress } from '../../src/cli/work-progress.js';
import { steppedClock } from '../helpers/stepped-clock.js';

const WORDS = { entries: { verb: 'checked', unit: 'entries' } };

/** stderr of a log: not a terminal; what is written is kept. */
function logStream(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  const written: string[] = [];
  const stream = { isTTY: false, write: (text: string) => written.push(text) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, lines: () => written.join('').split('\n').filter(Boolean) };
}

describe('the progress of counted work, into a log', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('a plain line every 5 s while the work waits, none before, none after stop', async () => {
    const { stream, lines } = logStream();
    const progress = await workProgress({ stderr: stream }, {}, WORDS);
    progress.set({ step: 'entries', done: 0, total: 100 });
    await vi.advanceTimersByTimeAsync(4_900);
    expect(lines()).toEqual([]);
    progress.set({ step: 'entries', done: 25, total: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/^progress: checked 25 of 100 entries \(25%\), \d+s left, 5s elapsed$/);
    progress.set({ step: 'entries', done: 50, total: 100 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(/^progress: checked 50 of 100 entries \(50%\), \d+s left, 10s elapsed$/);
    progress.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lines()).toHaveLength(2);
  });

  // A loop that reads entries without ever yielding to the timers (synchronous reads of a slow
  // disk) would otherwise say nothing until it is done.
  it('a line when it is due even while the work keeps the thread from the timers', async () => {
    const { stream, lines } = logStream();
    let clock = 0;
    const progress = await workProgress({ stderr: stream }, {}, WORDS, { now: () => clock });
    for (let done = 1; done <= 120; done++) {
      clock = done * 100;
      progress.set({ step: 'entries', done, total: 120 });
    }
    expect(lines()).toEqual([
      'progress: checked 50 of 120 entries (41%), 7s left, 5s elapsed',
      'progress: checked 100 of 120 entries (83%), 2s left, 10s elapsed',
    ]);
    progress.stop();
  });

  it.each([
    ['--json', { json: true }],
    ['--quiet', { quiet: true }],
    ['--json --quiet', { json: true, quiet: true }],
  ])('%s: nothing at all', async (_label, choice) => {
    const { stream, lines } = logStream();
    const progress = await workProgress({ stderr: stream }, choice, WORDS);
    progress.set({ step: 'entries', done: 1, total: 100 });
    await vi.advanceTimersByTimeAsync(60_000);
    progress.set({ step: 'entries', done: 2, total: 100 });
    progress.stop();
    expect(lines()).toEqual([]);
  });

  it('follows a count the core keeps itself', async () => {
    const { stream, lines } = logStream();
    const progress = await workProgress(
      { stderr: stream },
      {},
      { live: { verb: 'checked', unit: 'lists and resources' } },
    );
    let checked = 0;
    progress.follow(() => ({ step: 'live', done: checked, total: 40 }));
    for (let second = 1; second <= 5; second++) {
      checked += 2;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    progress.stop();
    expect(lines()).toEqual(['progress: checked 10 of 40 lists and resources (25%), 15s left, 5s elapsed']);
  });
});

describe("the progress of counted work, on the run's clock", () => {
  it('keeps time on the timer of io.clock: its lines come as that clock is stepped, none after stop', async () => {
    const { stream, lines } = logStream();
    const clock = steppedClock();
    const progress = await workProgress({ stderr: stream, clock }, {}, WORDS);
    progress.follow(() => ({ step: 'entries', done: clock.now() / 200, total: 100 }));
    clock.step(4_000);
    expect(lines()).toEqual([]);
    clock.step(1_000);
    expect(lines()).toEqual(['progress: checked 25 of 100 entries (25%), 15s left, 5s elapsed']);
    clock.step(5_000);
    expect(lines()).toHaveLength(2);
    progress.stop();
    clock.step(60_000);
    expect(lines()).toHaveLength(2);
  });
});
