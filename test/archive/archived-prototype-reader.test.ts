import { describe, expect, it } from 'vitest';
import { RabbitError } from '../../src/core/errors.js';
import {
  ArchivedPrototypeReader,
  READ_LIMITS,
  type EntryProblem,
  type PrototypeEntries,
  type ReaderOptions,
} from '../../src/archive/archived-prototype-reader.js';

const FOLDER = 'prototypes/7/r2/';

/**
 * A prototype's entries in memory, as the catalog hands them out: undefined for an entry it does
 * not hold, BODY_TOO_LARGE past the bound asked for. Every read is logged with its bound, and the
 * reads in flight are counted; `delay` holds a read back (to finish reads out of order).
 */
function entries(bodies: Record<string, string | Buffer>, delay?: (rest: string) => number) {
  const reads: { rest: string; maxBytes: number }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const source: PrototypeEntries = {
    id: '7',
    revision: 2,
    async *names() {
      yield* Object.keys(bodies);
    },
    async read(rest, maxBytes) {
      reads.push({ rest, maxBytes });
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, delay?.(rest) ?? 0));
        const body = bodies[rest];
        if (body === undefined) return undefined;
        const data = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
        if (data.length > maxBytes) throw new RabbitError('BODY_TOO_LARGE', `${FOLDER}${rest} is too large`);
        return data;
      } finally {
        inFlight--;
      }
    },
  };
  return { source, reads, mostInFlight: () => mostInFlight };
}

/** A reader of `bodies`, and what it told, as [code, what, ids] rows. */
function readerOf(
  bodies: Record<string, string | Buffer>,
  options: ReaderOptions = {},
  delay?: (rest: string) => number,
) {
  const problems: EntryProblem[] = [];
  const source = entries(bodies, delay);
  const reader = new ArchivedPrototypeReader(source.source, { ...options, onProblem: (p) => problems.push(p) });
  const told = () => problems.map((p) => [p.error.code, p.what]);
  return { reader, problems, told, ...source };
}

const json = (value: unknown) => JSON.stringify(value);

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('the reader of an archived prototype', () => {
  it('reads a prototype as the service sent it: its metadata, pages, layers, elements and discussions', async () => {
    const { reader, told } = readerOf({
      'prototype.json': json({
        prototypeData: { name: 'Shop', lastModification: 1700000000000, lastUser: 'Anna' },
        versions: {
          milestones: [
            { revision: 2, name: 'Two', created: '1700000000001', user: { name: 'Ben' } },
            { revision: 1, name: 'One' },
          ],
        },
      }),
      'pages.json': json(['page2', 'page1']),
      'pages/page1.json': json({ name: 'Start', layers: ['layer1'] }),
      'pages/page2.json': json({ name: 'Cart', layers: [] }),
      'pages/page1/elements.json': json(['element1', 'element2']),
      'pages/page1/elements/element1.json': json({ type: 'button', text: 'Buy' }),
      'pages/page1/elements/element2.json': json({ type: 'text', text: 42 }),
      'layers/layer1.json': json({ name: 'Header' }),
      'layers/layer1/elements.json': json(['element3']),
      'layers/layer1/elements/element3.json': json({ text: 'Menu' }),
      'discussions/5.json': json({
        pageId: 'page1',
        title: 'Why',
        positionX: 3,
        entries: [{ author: 'Anna', text: 'hi' }],
      }),
    });
    expect(await reader.meta()).toEqual({
      name: 'Shop',
      lastModification: 1700000000000,
      lastUser: 'Anna',
      milestones: [
        { revision: 1, name: 'One', created: null, user: null },
        { revision: 2, name: 'Two', created: 1700000000001, user: 'Ben' },
      ],
    });
    const order = await reader.pageOrder();
    expect(order).toEqual({ ids: ['page2', 'page1'], listed: true });
    expect(await all(reader.pages(order.ids))).toEqual([
      { id: 'page2', name: 'Cart', layerIds: [] },
      { id: 'page1', name: 'Start', layerIds: ['layer1'] },
    ]);
    expect((await all(reader.elements('page', 'page1'))).map((e) => [e.id, e.entry, e.text])).toEqual([
      ['element1', 'pages/page1/elements/element1.json', 'Buy'],
      ['element2', 'pages/page1/elements/element2.json', '42'],
    ]);
    expect(await reader.layer('layer1')).toEqual({ id: 'layer1', name: 'Header' });
    expect((await all(reader.elements('layer', 'layer1'))).map((e) => e.text)).toEqual(['Menu']);
    const [discussion] = await all(reader.discussions());
    expect(discussion).toMatchObject({ id: '5', pageId: 'page1', title: 'Why', x: 3, y: null });
    expect(discussion?.entries).toEqual([{ author: 'Anna', timestamp: null, text: 'hi' }]);
    expect(told()).toEqual([]);
  });

  it('reads every JSON entry within its bound, and an element within a tighter one', async () => {
    const big = Buffer.alloc(READ_LIMITS.elementBytes + 1, 0x20);
    big.write('{}');
    const { reader, reads, problems } = readerOf({
      'pages.json': json(['page1']),
      'pages/page1.json': json({ name: 'P' }),
      'pages/page1/elements.json': json(['element1', 'element2']),
      'pages/page1/elements/element1.json': big,
      'pages/page1/elements/element2.json': json({ text: 'kept' }),
    });
    await reader.page('page1');
    expect((await all(reader.elements('page', 'page1'))).map((e) => e.id)).toEqual(['element2']);
    expect(problems.map((p) => [p.error.code, p.what, p.ids])).toEqual([
      ['BODY_TOO_LARGE', 'element element1 of page page1', { page: 'page1', element: 'element1' }],
    ]);
    for (const { rest, maxBytes } of reads)
      expect(maxBytes, rest).toBe(rest.includes('/elements/') ? READ_LIMITS.elementBytes : READ_LIMITS.jsonBytes);
  });

  it('reads a page listed twice once, and says so', async () => {
    const { reader, problems } = readerOf({
      'pages.json': json(['page1', 'page2', 'page1']),
      'pages/page1.json': json({ name: 'One', layers: ['layer1', 'layer1'] }),
      'pages/page1/elements.json': json(['element1', 'element1']),
      'pages/page1/elements/element1.json': json({ text: 'x' }),
    });
    expect(await reader.listed('page')).toEqual(['page1', 'page2']);
    expect((await reader.page('page1')).layerIds).toEqual(['layer1']);
    expect((await all(reader.elements('page', 'page1'))).map((e) => e.id)).toEqual(['element1']);
    expect(problems.map((p) => [p.error.code, p.what, p.error.entry])).toEqual([
      ['DUPLICATE_ENTRY', 'the list of pages', `${FOLDER}pages.json`],
      ['DUPLICATE_ENTRY', 'page page1', `${FOLDER}pages/page1.json`],
      ['DUPLICATE_ENTRY', 'the elements of page page1', `${FOLDER}pages/page1/elements.json`],
    ]);
  });

  it('tells a missing entry by its full name and goes on: a page without its JSON keeps its place', async () => {
    const { reader, problems } = readerOf({
      'pages.json': json(['page1', 'page2']),
      'pages/page2.json': json({ name: 'Two' }),
      'pages/page2/elements.json': json(['element1', 'element2']),
      'pages/page2/elements/element2.json': json({ text: 'here' }),
    });
    expect(await all(reader.pages(['page1', 'page2']))).toEqual([
      { id: 'page1', name: null, layerIds: [] },
      { id: 'page2', name: 'Two', layerIds: [] },
    ]);
    expect((await all(reader.elements('page', 'page2'))).map((e) => e.id)).toEqual(['element2']);
    expect(await reader.elementIds('page', 'page1')).toBeUndefined();
    expect(problems.map((p) => [p.error.code, p.what, p.error.message])).toEqual([
      ['ENTRY_MISSING', 'page page1', `${FOLDER}pages/page1.json is not in the archive`],
      [
        'ENTRY_MISSING',
        'element element1 of page page2',
        `${FOLDER}pages/page2/elements/element1.json is not in the archive`,
      ],
      ['ENTRY_MISSING', 'the elements of page page1', `${FOLDER}pages/page1/elements.json is not in the archive`],
    ]);
  });

  it('without a usable pages.json, takes the page entries it holds in id order', async () => {
    for (const list of [undefined, '{', json('pages'), json(7)]) {
      const { reader, told } = readerOf({
        ...(list === undefined ? {} : { 'pages.json': list }),
        'pages/page10.json': json({}),
        'pages/page9.json': json({}),
        'pages/page9/elements.json': json([]),
      });
      expect(await reader.pageOrder(), String(list)).toEqual({ ids: ['page9', 'page10'], listed: false });
      const code = list === undefined ? 'ENTRY_MISSING' : list === '{' ? 'BAD_JSON' : 'BAD_SHAPE';
      expect(told()).toEqual([[code, 'the list of pages']]);
    }
  });

  it('takes pages.json in the old object form too', async () => {
    const { reader } = readerOf({ 'pages.json': json({ page2200: 'MyPage 3', page1: 'Start' }) });
    expect(await reader.pageOrder()).toEqual({ ids: ['page2200', 'page1'], listed: true });
  });

  it.each([
    ['an array', json([1])],
    ['a string', json('x')],
    ['null', 'null'],
    ['not JSON', '{"text":'],
  ])('leaves out an element whose JSON is %s, and tells why', async (_label, body) => {
    const { reader, told } = readerOf({
      'pages/page1/elements.json': json(['element1', 'element2']),
      'pages/page1/elements/element1.json': body,
      'pages/page1/elements/element2.json': json({ text: 'ok' }),
    });
    expect((await all(reader.elements('page', 'page1'))).map((e) => e.id)).toEqual(['element2']);
    expect(told()).toEqual([[body.startsWith('{') ? 'BAD_JSON' : 'BAD_SHAPE', 'element element1 of page page1']]);
  });

  it('takes a metadata, page, layer or discussion JSON that is no object as one that says nothing', async () => {
    const { reader, told } = readerOf({
      'prototype.json': json([{ prototypeData: { name: 'x' } }]),
      'pages/page1.json': json(['layer1']),
      'layers/layer1.json': json('Header'),
      'discussions/5.json': json([]),
    });
    expect(await reader.meta()).toEqual({ name: null, lastModification: null, lastUser: null, milestones: [] });
    expect(await reader.page('page1')).toEqual({ id: 'page1', name: null, layerIds: [] });
    expect(await reader.layer('layer1')).toEqual({ id: 'layer1', name: null });
    expect(await all(reader.discussions())).toEqual([]);
    expect(told()).toEqual([
      ['BAD_SHAPE', 'the prototype metadata'],
      ['BAD_SHAPE', 'page page1'],
      ['BAD_SHAPE', 'layer layer1'],
      ['BAD_SHAPE', 'discussion 5'],
    ]);
  });

  it('checks every id a list names before it becomes an entry name, and reads none that fails', async () => {
    const unsafe = [
      '..',
      '.',
      '%2e%2e',
      'a/b',
      'a\\b',
      'x'.repeat(300),
      'p\u0000q',
      '\u202eevil',
      '',
      7.5,
      null,
      { id: 1 },
    ];
    const { reader, reads, problems } = readerOf({
      'pages.json': json(['page1', ...unsafe]),
      'pages/page1.json': json({ layers: ['layer1', ...unsafe] }),
      'pages/page1/elements.json': json(unsafe),
      'discussions/5.json': json({ pageId: '../page1' }),
    });
    expect(await reader.listed('page')).toEqual(['page1']);
    expect((await reader.page('page1')).layerIds).toEqual(['layer1']);
    expect(await all(reader.elements('page', 'page1'))).toEqual([]);
    expect((await all(reader.discussions()))[0]?.pageId).toBeNull();
    expect(reads.map((r) => r.rest)).toEqual([
      'pages.json',
      'pages/page1.json',
      'pages/page1/elements.json',
      'discussions/5.json',
    ]);
    expect(problems.every((p) => p.error.code === 'BAD_ID')).toBe(true);
    expect(problems.map((p) => p.what)).toContain('layer \u202eevil');
    expect(problems.map((p) => p.what)).toContain('element .. of page page1');
    expect(problems).toHaveLength(unsafe.length * 3);
  });

  it(`tells the first ${READ_LIMITS.toldIds} values of a list that are no ids one by one, and counts the rest`, async () => {
    const junk = Array.from({ length: 1000 }, (_, i) => `bad-${i}`);
    const { reader, problems } = readerOf({ 'pages.json': json(['page1', ...junk]) });
    expect(await reader.listed('page')).toEqual(['page1']);
    expect(problems).toHaveLength(READ_LIMITS.toldIds + 1);
    expect(problems.at(-1)?.error.message).toBe(
      `${FOLDER}pages.json lists ${1000 - READ_LIMITS.toldIds} more values that are no page ids`,
    );
  });

  it("for restore, takes only the service's id shapes and list forms", async () => {
    const bodies = {
      'pages.json': json(['page1', 'layer1', 'p2', 5]),
      'layers.json': json({ layer1: 'Header' }),
      'pages/page1/elements.json': json({ element1: {} }),
    };
    const lenient = readerOf(bodies);
    expect(await lenient.reader.listed('page')).toEqual(['page1', 'layer1', 'p2', '5']);
    expect(await lenient.reader.listed('layer')).toEqual(['layer1']);
    expect(await lenient.reader.elementIds('page', 'page1')).toEqual(['element1']);
    const strict = readerOf(bodies, { ids: 'service' });
    expect(await strict.reader.listed('page')).toEqual(['page1']);
    expect(await strict.reader.listed('layer')).toBeUndefined();
    expect(await strict.reader.elementIds('page', 'page1')).toBeUndefined();
    expect(strict.told()).toEqual([
      ['BAD_ID', 'page layer1'],
      ['BAD_ID', 'page p2'],
      ['BAD_ID', 'page 5'],
      ['BAD_SHAPE', 'the list of layers'],
      ['BAD_SHAPE', 'the elements of page page1'],
    ]);
  });

  it('tells what it reads ahead in the order of the records, however the reads finish', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `element${i}`);
    const bodies: Record<string, string> = { 'pages/page1/elements.json': json(ids) };
    // Every third element missing, the later ones answered first.
    ids.forEach((id, i) => i % 3 !== 0 && (bodies[`pages/page1/elements/${id}.json`] = json({ text: id })));
    const { reader, problems } = readerOf(bodies, {}, (rest) => 40 - Number(/(\d+)\.json$/.exec(rest)?.[1] ?? 40));
    const read = await all(reader.elements('page', 'page1'));
    expect(read.map((e) => e.id)).toEqual(ids.filter((_, i) => i % 3 !== 0));
    expect(problems.map((p) => p.ids.element)).toEqual(ids.filter((_, i) => i % 3 === 0));
  });

  it(`streams: at most ${READ_LIMITS.readAhead} reads in flight, and none past the window while the records wait`, async () => {
    const count = 2000;
    const pageIds = Array.from({ length: count }, (_, i) => `page${i}`);
    const bodies: Record<string, string> = { 'pages.json': json(pageIds) };
    for (const id of pageIds) bodies[`pages/${id}.json`] = json({ name: id });
    const { reader, reads, mostInFlight } = readerOf(bodies);
    const pages = reader.pages((await reader.pageOrder()).ids);
    await pages.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads.length).toBeLessThanOrEqual(1 + READ_LIMITS.readAhead + 1);
    let seen = 1;
    for await (const _page of pages) seen++;
    expect(seen).toBe(count);
    expect(mostInFlight()).toBeLessThanOrEqual(READ_LIMITS.readAhead);
  });

  it('lets a read that is not about the archive fail the read', async () => {
    const { source } = entries({});
    const failing: PrototypeEntries = { ...source, read: () => Promise.reject(new Error('EIO')) };
    await expect(new ArchivedPrototypeReader(failing).page('page1')).rejects.toThrow('EIO');
  });
});
