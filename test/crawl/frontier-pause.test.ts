import { describe, expect, it } from 'vitest';
import { Frontier } from '../../src/crawl/frontier.js';

/** A task the test finishes by hand, so nothing depends on timing. */
function gate(): { task: () => Promise<void>; started: boolean; finish: () => void } {
  let release: () => void = () => undefined;
  const handle = {
    started: false,
    finish: () => release(),
    task: () => {
      handle.started = true;
      return new Promise<void>((resolve) => (release = resolve));
    },
  };
  return handle;
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('frontier back-pressure', () => {
  it('starts nothing while paused, lets running tasks finish, and carries on when resumed', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    const tasks = Array.from({ length: 5 }, gate);
    frontier.add(tasks[0]!.task);
    await settle();
    expect(tasks[0]!.started).toBe(true);
    frontier.pause();
    for (const t of tasks.slice(1)) frontier.add(t.task);
    tasks[0]!.finish();
    await settle();
    expect(tasks.slice(1).filter((t) => t.started)).toHaveLength(0);
    expect(frontier.running).toBe(0);
    expect(frontier.queued).toBe(4);
    let drained = false;
    const draining = frontier.drain().then(() => (drained = true));
    await settle();
    expect(drained).toBe(false);
    frontier.resume();
    await settle();
    // Newest first, two at a time.
    expect(tasks.map((t) => t.started)).toEqual([true, false, false, true, true]);
    for (const t of tasks) t.finish();
    await settle();
    for (const t of tasks) t.finish();
    await draining;
    expect(tasks.every((t) => t.started)).toBe(true);
  });
});

describe('work beside the frontier', () => {
  it('starts at once in no slot, ahead of pending tasks, and the drain waits for it', async () => {
    const frontier = new Frontier({ concurrency: 1 });
    const tasks = Array.from({ length: 3 }, gate);
    for (const t of tasks) frontier.add(t.task);
    const work = gate();
    frontier.beside(work.task);
    await settle();
    // The one slot is held and two tasks wait, yet the work has started and takes no slot.
    expect(work.started).toBe(true);
    expect(frontier.running).toBe(1);
    expect(frontier.queued).toBe(2);
    let drained = false;
    const draining = frontier.drain().then(() => (drained = true));
    // Newest first: the first added holds the slot, then the last, then the middle one.
    for (const t of [tasks[0], tasks[2], tasks[1]]) {
      await settle();
      expect(t!.started).toBe(true);
      t!.finish();
    }
    await settle();
    expect(drained).toBe(false);
    work.finish();
    await draining;
    expect(drained).toBe(true);
  });

  it('fails the drain when it fails, and is refused once the frontier is halted', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    frontier.beside(() => Promise.reject(new Error('disk full')));
    await expect(frontier.drain()).rejects.toThrow('disk full');

    const halted = new Frontier({ concurrency: 2 });
    halted.halt();
    const work = gate();
    halted.beside(work.task);
    await settle();
    expect(work.started).toBe(false);
    await halted.drain();
  });
});

describe('frontier held during an outage', () => {
  it('starts nothing while held, whatever the back-pressure does, and carries on when released', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    const tasks = Array.from({ length: 3 }, gate);
    frontier.hold();
    for (const t of tasks) frontier.add(t.task);
    // The zip writer catching up must not restart a crawl that waits for the service.
    frontier.pause();
    frontier.resume();
    await settle();
    expect(tasks.filter((t) => t.started)).toHaveLength(0);
    frontier.release();
    await settle();
    expect(tasks.filter((t) => t.started)).toHaveLength(2);
    for (const t of tasks) t.finish();
    await settle();
    for (const t of tasks) t.finish();
    await frontier.drain();
    expect(tasks.every((t) => t.started)).toBe(true);
  });
  it('holds count: an outage and a check of a refused key at once start nothing until both are released', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    const work = gate();
    frontier.hold();
    frontier.hold();
    frontier.add(work.task);
    frontier.release();
    await settle();
    expect(work.started).toBe(false);
    frontier.release();
    await settle();
    expect(work.started).toBe(true);
    work.finish();
    await frontier.drain();
  });
});
