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
