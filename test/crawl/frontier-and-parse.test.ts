import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Frontier } from '../../src/crawl/frontier.js';
import { parseIdList, parsePrototype } from '../../src/api/parse.js';
import { currentRevision } from '../../src/api/revision.js';
import { archivePathFor, isSafeEntryName } from '../../src/api/paths.js';
import { normalizeId } from '../../src/api/ids.js';
import { isRabbitError } from '../../src/core/errors.js';

describe('frontier', () => {
  it('runs exactly N at a time while work remains, including work added by running tasks', async () => {
    const frontier = new Frontier({ concurrency: 4 });
    let running = 0;
    const samples: number[] = [];
    const task = (depth: number) => async (): Promise<void> => {
      running++;
      samples.push(running);
      await sleep(5);
      running--;
      // Children are added, never awaited: one limiter for the whole walk.
      if (depth < 3) for (let i = 0; i < 3; i++) frontier.add(task(depth + 1));
    };
    frontier.add(task(0));
    await frontier.drain();
    expect(Math.max(...samples)).toBe(4);
    expect(frontier.peakRunning).toBe(4);
    expect(samples).toHaveLength(1 + 3 + 9 + 27);
    // Once the tree is wide enough, every start happens with the others busy.
    expect(samples.slice(10, 30).every((n) => n === 4)).toBe(true);
  });

  it('runs `ahead` more tasks only at full concurrency, and counts none of them as in flight', async () => {
    const frontier = new Frontier({ concurrency: 4, ahead: 1 });
    let running = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const task = async (): Promise<void> => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    };
    const settle = async (): Promise<void> => {
      while (gates.length > 0) (gates.shift() as () => void)();
      await sleep(1);
    };
    for (let i = 0; i < 40; i++) frontier.add(task);
    await sleep(1);
    // Four in flight and one waiting for a connection.
    expect(running).toBe(5);
    expect(frontier.running).toBe(4);
    expect(frontier.concurrency).toBe(4);
    // Throttled to 2: the pool has idle connections now, so nothing runs ahead.
    frontier.concurrency = 2;
    await settle();
    expect(running).toBe(2);
    expect(frontier.running).toBe(2);
    // Back at full: one ahead again. Never more than the full value plus one.
    frontier.concurrency = 4;
    await sleep(1);
    expect(running).toBe(5);
    frontier.concurrency = 9;
    expect(frontier.concurrency).toBe(4);
    while (gates.length > 0) await settle();
    await frontier.drain();
    expect(most).toBe(5);
    expect(frontier.peakRunning).toBe(4);
  });

  it('gives a slot to the next task when a task hands it off, and drains only when that task has ended too', async () => {
    const frontier = new Frontier({ concurrency: 1 });
    const log: string[] = [];
    let release: () => void = () => undefined;
    const stored = new Promise<void>((resolve) => (release = resolve));
    frontier.add(async (handOff) => {
      log.push('first fetched');
      await handOff();
      log.push('first stores');
      await stored;
      log.push('first ended');
    });
    frontier.add(async () => {
      log.push('second starts');
    });
    let drained = false;
    const drain = frontier.drain().then(() => (drained = true));
    await sleep(5);
    // With one slot, the second started before the first went on to store what it fetched.
    expect(log).toEqual(['first fetched', 'second starts', 'first stores']);
    expect(frontier.running).toBe(0);
    expect(drained).toBe(false);
    release();
    await drain;
    expect(log.at(-1)).toBe('first ended');
  });

  it('fails the drain with the first failure and drops what had not started', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    let started = 0;
    for (let i = 0; i < 10; i++) {
      frontier.add(async () => {
        const mine = ++started;
        await sleep(2);
        if (mine === 1) throw new Error('boom');
      });
    }
    await expect(frontier.drain()).rejects.toThrow('boom');
    frontier.stop(new Error('stopped'));
    await frontier.quiet();
    expect(started).toBeLessThan(10);
  });

  it('starts a task in a microtask of its own, and not at all when halted before it', async () => {
    const frontier = new Frontier({ concurrency: 2 });
    const started: string[] = [];
    frontier.add(async () => {
      started.push('a');
      // Added while starting: starts after this task's first step, not inside it.
      frontier.add(async () => {
        started.push('c');
      });
      started.push('a done');
    });
    expect(started).toEqual([]);
    await frontier.drain();
    expect(started).toEqual(['a', 'a done', 'c']);

    const halted = new Frontier({ concurrency: 2 });
    halted.add(async () => {
      started.push('never');
    });
    halted.halt();
    await halted.drain();
    await halted.quiet();
    expect(started).not.toContain('never');
    expect(halted.running).toBe(0);
  });
});

describe('parsing what the service sends', () => {
  it.each([
    [['page0001', 'page7830', 'page0001'], ['page0001', 'page7830'], []],
    [{ page2200: 'MyPage 3', page15: 'Kontakt' }, ['page2200', 'page15'], []],
    [['page1', '../../x', 'page1/../../etc', 7, null], ['page1'], ['"../../x"', '"page1/../../etc"', '7', 'null']],
  ])('page list %j gives ids %j and rejects %j', (value, ids, rejected) => {
    expect(parseIdList(value, 'page', '/s', true)).toEqual({ ids, rejected });
  });

  it('accepts the object form only where the old API used it', () => {
    const error = (() => {
      try {
        parseIdList({ element1: 'x' }, 'element', '/s');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isRabbitError(error, 'BAD_SHAPE')).toBe(true);
  });

  it.each([
    ['prototype', 3, '3'],
    ['prototype', '0042', '0042'],
    ['prototype', -1, undefined],
    ['prototype', 1.5, undefined],
    ['prototype', 2 ** 60, undefined],
    ['page', 'page0001', 'page0001'],
    ['page', 'Page1', undefined],
    ['page', 'page1 ', undefined],
    ['layer', 'layer5', 'layer5'],
    ['element', 'element9/../x', undefined],
    ['discussion', 88, '88'],
  ] as const)('%s id %j is %j', (kind, raw, expected) => {
    expect(normalizeId(kind, raw)).toBe(expected);
  });

  it.each([
    [[1, 5, 4, 2, 3, 6], 6],
    [[3, 1, 2], 3],
    [[], 0],
    [undefined, 0],
  ])('milestones %j give revision %i', (revisions, expected) => {
    const prototype =
      revisions === undefined
        ? { id: 1 }
        : { versions: { milestones: revisions.map((revision) => ({ revision, name: 'autosaved' })) } };
    expect(currentRevision(prototype).revision).toBe(expected);
  });

  it('reads the fields it relies on and tolerates the rest', () => {
    expect(
      parsePrototype({ id: 3, prototypeData: { name: 'foo', lastModification: 5, lastUser: 'V' }, extra: true }, '/s'),
    ).toEqual({
      name: 'foo',
      lastModification: 5,
      lastUser: 'V',
    });
    expect(() => parsePrototype([], '/s')).toThrow(expect.objectContaining({ code: 'BAD_SHAPE' }));
    expect(() => parsePrototype({ versions: { milestones: 'x' } }, '/s')).toThrow(
      expect.objectContaining({ code: 'BAD_SHAPE' }),
    );
  });
});

describe('archive paths', () => {
  it.each([
    ['/rabbit/api/prototypes.json', 4, 'prototypes.json'],
    ['/rabbit/api/prototypes/4711.json', 17, 'prototypes/4711/r17/prototype.json'],
    ['/rabbit/api/prototypes/4711/pages/page0001.png', 17, 'prototypes/4711/r17/pages/page0001.png'],
    [
      '/rabbit/api/prototypes/4711/layers/layer5/elements/element9.json',
      0,
      'prototypes/4711/r0/layers/layer5/elements/element9.json',
    ],
  ])('%s at revision %i is %s', (source, revision, path) => {
    expect(archivePathFor(source, revision)).toBe(path);
  });

  it.each([
    '/rabbit/api/prototypes/1/pages/../../../etc/passwd',
    '/rabbit/api/prototypes/1/pages/.hidden',
    '/rabbit/api/prototypes/1//x',
    '/elsewhere/prototypes/1.json',
    '/rabbit/api/prototypes/1/pages/a b.json',
  ])('refuses %s', (source) => {
    expect(() => archivePathFor(source, 1)).toThrow(expect.objectContaining({ code: 'BAD_ID', source }));
  });

  it.each([
    ['prototypes/1/r2/pages/page1.json', true],
    ['../x', false],
    ['/etc/passwd', false],
    ['a\\b', false],
    ['a//b', false],
  ])('entry name %s is safe: %s', (name, safe) => {
    expect(isSafeEntryName(name)).toBe(safe);
  });
});
