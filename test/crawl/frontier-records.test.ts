import { describe, expect, it } from 'vitest';
import { Frontier, type TaskRecord } from '../../src/crawl/frontier.js';

// issue 42: the crawl schedules every resource a list names as a small record rather than a
// closure (and the context it keeps alive); the frontier runs both kinds alike.
describe('a task given as a record', () => {
  it('runs by its own run(), in its group, and may hand its slot off as a function task does', async () => {
    const frontier = new Frontier({ concurrency: 1 });
    const order: string[] = [];
    class Step implements TaskRecord {
      constructor(readonly name: string) {}
      async run(handOff: () => Promise<void>): Promise<void> {
        order.push(`${this.name} start`);
        await handOff();
        order.push(`${this.name} end`);
      }
    }
    // Held while the tasks are added, so that the ranks decide which starts first.
    frontier.hold();
    frontier.rank('b', 2);
    frontier.rank('a', 1);
    frontier.add(new Step('b'), 'b');
    frontier.add(new Step('a'), 'a');
    frontier.add(async () => {
      order.push('first');
    });
    frontier.release();
    await frontier.drain();
    expect(order).toEqual(['first', 'a start', 'b start', 'a end', 'b end']);
  });
});
