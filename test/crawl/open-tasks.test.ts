import { describe, expect, it } from 'vitest';
import { OpenTasks } from '../../src/crawl/open-tasks.js';

describe('OpenTasks', () => {
  it.each([
    { label: 'one task', steps: ['+a', '-a'], done: ['a'] },
    { label: 'a task that opens another before it closes', steps: ['+a', '+a', '-a', '-a'], done: ['a'] },
    { label: 'two prototypes interleaved', steps: ['+a', '+b', '+a', '-a', '-b', '-a'], done: ['b', 'a'] },
    { label: 'a prototype done, then another', steps: ['+a', '-a', '+b', '+b', '-b', '-b'], done: ['a', 'b'] },
  ])('$label', ({ steps, done }) => {
    const tasks = new OpenTasks();
    const finished: string[] = [];
    for (const step of steps) {
      const id = step.slice(1);
      if (step.startsWith('+')) tasks.opened(id);
      else if (tasks.closed(id)) finished.push(id);
    }
    expect(finished).toEqual(done);
  });
});

describe('OpenTasks.left', () => {
  it('is the tasks open, or what the prototype cost last time less those closed, whichever is more', () => {
    const tasks = new OpenTasks();
    expect(tasks.left('a', 50)).toBe(0);
    tasks.opened('a');
    expect(tasks.left('a')).toBe(1);
    expect(tasks.left('a', 50)).toBe(50);
    for (let i = 0; i < 9; i++) tasks.opened('a');
    for (let i = 0; i < 5; i++) tasks.closed('a');
    expect(tasks.left('a')).toBe(5);
    expect(tasks.left('a', 50)).toBe(45);
    expect(tasks.left('a', 8)).toBe(5);
    expect(tasks.entries()).toEqual([['a', 5]]);
  });
});
