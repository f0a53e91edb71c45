import { describe, expect, it } from 'vitest';
import { Frontier } from '../../src/crawl/frontier.js';
import { RankedStacks } from '../../src/crawl/ranked-stacks.js';

// issue 37, point 4: the frontier's one queue takes a prototype's tasks in the order of what is
// left of it, so a run that must stop early has done whole prototypes, the smallest first.

/** Runs `tasks` one at a time and returns the order they started in. */
async function order(
  setup: (frontier: Frontier, task: (name: string) => () => Promise<void>) => void,
): Promise<string[]> {
  const frontier = new Frontier({ concurrency: 1 });
  const started: string[] = [];
  const task = (name: string) => async (): Promise<void> => void started.push(name);
  // Held while the tasks are added, as they are during a crawl: nothing starts until all wait.
  frontier.hold();
  setup(frontier, task);
  frontier.release();
  await frontier.drain();
  return started;
}

describe('the frontier ranks groups of tasks', () => {
  it('starts tasks of no group first, then the group of lowest rank, each newest first', async () => {
    const started = await order((frontier, task) => {
      frontier.add(task('big-1'), 'big');
      frontier.add(task('small-1'), 'small');
      frontier.add(task('big-2'), 'big');
      frontier.add(task('list'));
      frontier.add(task('small-2'), 'small');
      frontier.rank('big', 500);
      frontier.rank('small', 20);
    });
    expect(started).toEqual(['list', 'small-2', 'small-1', 'big-2', 'big-1']);
  });

  it('a new rank moves a group that is waiting; equal ranks keep the order the groups came in', async () => {
    const started = await order((frontier, task) => {
      for (const group of ['a', 'b', 'c']) {
        frontier.add(task(group), group);
        frontier.rank(group, 10);
      }
      frontier.rank('a', 30);
      frontier.rank('c', 5);
    });
    expect(started).toEqual(['c', 'b', 'a']);
  });

  it('a rank changed by a running task (its list named more) lets another group go first', async () => {
    const frontier = new Frontier({ concurrency: 1 });
    const started: string[] = [];
    frontier.hold();
    frontier.add(async () => void started.push('a1'), 'a');
    frontier.add(async () => {
      started.push('a2');
      frontier.rank('a', 5);
    }, 'a');
    frontier.add(async () => void started.push('c'), 'c');
    frontier.rank('a', 1);
    frontier.rank('c', 2);
    frontier.release();
    await frontier.drain();
    expect(started).toEqual(['a2', 'c', 'a1']);
  });

  it('halt drops every group', async () => {
    const frontier = new Frontier({ concurrency: 1 });
    frontier.hold();
    for (const group of ['a', 'b', undefined]) frontier.add(async () => undefined, group);
    expect(frontier.queued).toBe(3);
    frontier.halt();
    expect(frontier.queued).toBe(0);
    await frontier.drain();
  });
});

describe('RankedStacks', () => {
  it('keeps the heap in order through many rank changes (checked against a sort)', () => {
    const stacks = new RankedStacks<string>();
    const ranks = new Map<string, number>();
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const names = Array.from({ length: 40 }, (_, i) => `g${i}`);
    for (const name of names) {
      stacks.push(name, name);
      ranks.set(name, 0);
    }
    for (let i = 0; i < 500; i++) {
      const name = names[next(names.length)] as string;
      const rank = next(100);
      stacks.rank(name, rank);
      ranks.set(name, rank);
    }
    // Ties go to the group seen first: the index in `names`.
    const expected = [...names].sort(
      (a, b) => (ranks.get(a) as number) - (ranks.get(b) as number) || names.indexOf(a) - names.indexOf(b),
    );
    const popped: string[] = [];
    for (let item = stacks.pop(); item !== undefined; item = stacks.pop()) popped.push(item);
    expect(popped).toEqual(expected);
    expect(stacks.size).toBe(0);
  });
});
