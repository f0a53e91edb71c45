import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ArchiveModel } from '../../src/manifest/archive-model.js';
import type { StoredFile } from '../../src/storage/stored-file.js';
import { manifestText, prettyEntry } from '../../src/manifest/write-manifest.js';
import type { FileEntry, Manifest } from '../../src/manifest/types.js';
import { KeyedSpill } from '../../src/storage/keyed-spill.js';
import { compareByIdKey, compareIds, idSortKey } from '../../src/api/ids.js';
import { assertValidManifest } from '../helpers/manifest-schema.js';
import { tempDir } from '../helpers/temp.js';

const meta = {
  toolVersion: '9.9.9',
  baseUrl: 'https://rabbit.test',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:01:00.000Z',
  stats: { requests: 7, retries: 1, bytes: 99, files: 5 },
};

function stored(path: string, source: string, size = 3): StoredFile {
  return {
    path,
    source,
    sha256: 'ab'.repeat(32),
    size,
    contentType: 'application/json',
    lastModified: null,
    file: '/spool/pack',
    offset: 0,
  };
}

async function model(): Promise<{ model: ArchiveModel; spill: KeyedSpill }> {
  const spill = await KeyedSpill.create(join(await tempDir(), 'entries'));
  // Closed whatever the test does (some close it themselves first, to read what it wrote).
  onTestFinished(() => spill.close());
  return {
    model: new ArchiveModel(
      spill,
      () => undefined,
      (text) => text.replaceAll('SECRET', '***'),
    ),
    spill,
  };
}

async function text(m: ArchiveModel): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of manifestText(m, meta))
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return Buffer.concat(parts).toString('utf8');
}

describe('manifest.json streamed by prototype', () => {
  it('is exactly what JSON.stringify makes of the whole, with prototypes, files and errors in order', async () => {
    const { model: m, spill } = await model();
    // Milestones are the service's objects: one carries a "files" key of its own.
    m.addPrototype({
      id: '10',
      name: 'Ten "quoted" <b>',
      lastModification: 5,
      lastUser: 'Ada',
      revision: 2,
      milestone: { revision: 2, files: [] },
      origin: { mode: 'fetched' },
    });
    m.addPrototype({
      id: '9',
      name: null,
      lastModification: null,
      lastUser: null,
      revision: 1,
      milestone: null,
      origin: { mode: 'fetched' },
    });
    m.addFile('10', stored('prototypes/10/r2/pages/page10.json', '/rabbit/api/prototypes/10/pages/page10.json'));
    m.addFile('10', stored('prototypes/10/r2/pages/page9.json', '/rabbit/api/prototypes/10/pages/page9.json'));
    m.addFile('9', stored('prototypes/9/r1/prototype.json', '/rabbit/api/prototypes/9.json'));
    m.addFile(undefined, stored('prototypes.json', '/rabbit/api/prototypes.json'));
    m.addError({
      source: '/rabbit/api/prototypes/10/layers.json',
      status: 500,
      message: 'GET failed api_key=SECRET',
      attempts: 5,
    });
    m.addError({ source: '/css/site.css', code: 'HTTP_STATUS', message: 'gone' });
    m.addError({ source: '/rabbit/api/prototypes/9/pages.json', code: 'BAD_SHAPE', message: 'not a list' });
    m.foreignReferences.push({
      url: 'https://fonts.example.com/x.css',
      referencedBy: ['prototypes/10/r2/pages/page9.html'],
    });

    const written = await text(m);
    await spill.close();
    const expected: Manifest = {
      formatVersion: 1,
      tool: { name: 'rabbit-export', version: '9.9.9' },
      source: { baseUrl: 'https://rabbit.test' },
      startedAt: meta.startedAt,
      finishedAt: meta.finishedAt,
      complete: false,
      prototypes: {
        '9': {
          name: null,
          lastModification: null,
          lastUser: null,
          revision: 1,
          complete: false,
          origin: { mode: 'fetched' },
          revisions: {
            '1': { milestone: null, files: [entry('prototypes/9/r1/prototype.json', '/rabbit/api/prototypes/9.json')] },
          },
        },
        '10': {
          name: 'Ten "quoted" <b>',
          lastModification: 5,
          lastUser: 'Ada',
          revision: 2,
          complete: false,
          origin: { mode: 'fetched' },
          revisions: {
            '2': {
              milestone: { revision: 2, files: [] },
              files: [
                entry('prototypes/10/r2/pages/page9.json', '/rabbit/api/prototypes/10/pages/page9.json'),
                entry('prototypes/10/r2/pages/page10.json', '/rabbit/api/prototypes/10/pages/page10.json'),
              ],
            },
          },
        },
      },
      files: [entry('prototypes.json', '/rabbit/api/prototypes.json')],
      errors: [
        { source: '/css/site.css', code: 'HTTP_STATUS', message: 'gone' },
        { source: '/rabbit/api/prototypes/9/pages.json', code: 'BAD_SHAPE', message: 'not a list' },
        {
          source: '/rabbit/api/prototypes/10/layers.json',
          status: 500,
          message: 'GET failed api_key=***',
          attempts: 5,
        },
      ],
      foreignReferences: [
        { url: 'https://fonts.example.com/x.css', referencedBy: ['prototypes/10/r2/pages/page9.html'] },
      ],
      stats: meta.stats,
    };
    // Object keys that look like integers come first in JSON.stringify, as in the manifest.
    expect(written).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    assertValidManifest(JSON.parse(written));
  });

  it("keeps no key in an error's source, message or offending id", async () => {
    const { model: m, spill } = await model();
    m.addError({
      source: '/rabbit/api/prototypes/SECRET.json',
      code: 'BAD_ID',
      id: 'pageSECRET',
      message: 'id pageSECRET is not a page id',
    });
    const written = await text(m);
    await spill.close();
    expect(written).not.toContain('SECRET');
    expect(JSON.parse(written).errors).toEqual([
      {
        source: '/rabbit/api/prototypes/***.json',
        code: 'BAD_ID',
        id: 'page***',
        message: 'id page*** is not a page id',
      },
    ]);
  });

  it('writes an empty account as a valid, complete manifest', async () => {
    const { model: m, spill } = await model();
    const written = await text(m);
    await spill.close();
    const parsed = JSON.parse(written) as Manifest;
    expect(parsed).toMatchObject({ complete: true, prototypes: {}, files: [], errors: [] });
    expect(written).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
  });

  it('comes in buffers of its own size, not one per prototype, however many small prototypes there are', async () => {
    const { model: m, spill } = await model();
    const count = 600;
    for (let id = 1; id <= count; id++) {
      m.addPrototype({
        id: String(id),
        name: `P${id}`,
        lastModification: id,
        lastUser: null,
        revision: 1,
        milestone: null,
        origin: { mode: 'fetched' },
      });
      m.addFile(String(id), stored(`prototypes/${id}/r1/prototype.json`, `/rabbit/api/prototypes/${id}.json`));
      m.addFile(String(id), stored(`prototypes/${id}/r1/pages.json`, `/rabbit/api/prototypes/${id}/pages.json`));
    }
    const chunks: (string | Buffer)[] = [];
    for await (const chunk of manifestText(m, meta)) chunks.push(chunk);
    await spill.close();
    const bytes = chunks.reduce((sum, c) => sum + (typeof c === 'string' ? Buffer.byteLength(c) : c.length), 0);
    // Every buffer handed on is memory until it is collected: it grew with the number of
    // prototypes when each one's list got a fresh buffer.
    const held = new Set(chunks.flatMap((c) => (typeof c === 'string' ? [] : [c.buffer])));
    const heldBytes = [...held].reduce((sum, b) => sum + b.byteLength, 0);
    expect(bytes).toBeGreaterThan(300_000);
    expect(chunks.length).toBeLessThan(bytes / 32_768 + 4);
    expect(heldBytes).toBeLessThan(bytes + 4 * 65_536);
    expect(
      JSON.parse(Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString()),
    ).toMatchObject({ prototypes: { '600': { name: 'P600' } } });
  });
});

describe('the files of a prototype read back', () => {
  it('leave out the element bodies without reading them when asked, and merge them back in path order otherwise', async () => {
    const { model: m, spill } = await model();
    const read: string[] = [];
    const lineBytes = spill.lineBytes.bind(spill);
    spill.lineBytes = async (key: string) => {
      read.push(key);
      return lineBytes(key);
    };
    m.addPrototype({
      id: '7',
      name: 'p',
      lastModification: 1,
      lastUser: null,
      revision: 1,
      milestone: null,
      origin: { mode: 'fetched' },
    });
    const paths = [
      'prototypes/7/r1/pages/page10/elements/element3.json',
      'prototypes/7/r1/pages/page2.json',
      'prototypes/7/r1/pages/page2/elements.json',
      'prototypes/7/r1/pages/page2/elements/element10.json',
      'prototypes/7/r1/pages/page2/elements/element9.json',
      'prototypes/7/r1/layers/layer1/elements/element1.json',
      'prototypes/7/r1/pages/page10.html',
    ];
    for (const path of paths) m.addFile('7', stored(path, `/rabbit/api/${path}`));
    m.addFile(undefined, stored('assets/a.css', '/css/a.css'));
    const all = (await m.files('7')).map((file) => file.path);
    expect(all).toEqual([...paths].sort(compareIds));
    expect(all.indexOf('prototypes/7/r1/pages/page2/elements/element9.json')).toBeLessThan(
      all.indexOf('prototypes/7/r1/pages/page2/elements/element10.json'),
    );
    read.length = 0;
    const viewed = (await m.files('7', { elementBodies: false })).map((file) => file.path);
    expect(viewed).toEqual([
      'prototypes/7/r1/pages/page2.json',
      'prototypes/7/r1/pages/page2/elements.json',
      'prototypes/7/r1/pages/page10.html',
    ]);
    expect(read).toEqual(['7']);
    expect((await m.files(undefined)).map((file) => file.path)).toEqual(['assets/a.css']);
    expect(m.fileCount).toBe(paths.length + 1);
  });
});

describe('compareIds', () => {
  it.each([
    ['9', '10', -1],
    ['page2', 'page10', -1],
    ['page0001', 'page1', -1],
    ['page0001', 'page0001', 0],
    ['prototypes/9/r1/x', 'prototypes/10/r1/x', -1],
    ['a', 'a1', -1],
    ['element99.json', 'element100.json', -1],
    ['B', 'a', -1],
  ])('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareIds(a, b)) || 0).toBe(sign);
    expect(Math.sign(compareIds(b, a)) || 0).toBe(-sign || 0);
  });
});

describe('idSortKey', () => {
  it('orders ids as compareIds does, by key where keys differ and by compareIds where they are equal', () => {
    // Runs of digits with and without leading zeros, next to characters below, between and above the digits.
    const parts = [
      '0',
      '00',
      '1',
      '01',
      '9',
      '10',
      '099',
      '100',
      '12345678901',
      'a',
      'B',
      '/',
      '.',
      ':',
      '-',
      'page',
      'é',
    ];
    let seed = 7;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const ids = Array.from({ length: 400 }, () =>
      Array.from({ length: 1 + next(5) }, () => parts[next(parts.length)]).join(''),
    );
    ids.push('', 'page0001', 'page1', 'page01', `x${'1'.repeat(120)}`, `x${'2'.repeat(99)}`);
    const wrong: string[] = [];
    let keyed = 0;
    const numeric = (id: string): string => id.replace(/\d+/g, (run) => String(BigInt(run)));
    for (const a of ids) {
      for (const b of ids) {
        const expected = Math.sign(compareIds(a, b));
        const ka = idSortKey(a);
        const kb = idSortKey(b);
        if (Math.sign(compareByIdKey({ id: a, key: ka }, { id: b, key: kb })) !== expected) wrong.push(`${a} vs ${b}`);
        if (ka === undefined || kb === undefined) continue;
        if (ka !== kb) keyed++;
        if (ka === kb ? numeric(a) !== numeric(b) : (ka < kb ? -1 : 1) !== expected) wrong.push(`keys of ${a} vs ${b}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(keyed).toBeGreaterThan(100_000);
    expect(idSortKey(`x${'1'.repeat(100)}`)).toBeUndefined();
    expect(idSortKey('page0054/elements/element5381.json')).toBe('page0254/elements/element045381.json');
  });
});

function entry(path: string, source: string): FileEntry {
  return { path, source, sha256: 'ab'.repeat(32), size: 3, contentType: 'application/json', lastModified: null };
}

describe('prettyEntry', () => {
  const indent = (text: string, depth: number): string => text.replaceAll('\n', `\n${' '.repeat(depth)}`);
  const entries: Array<FileEntry & { offset?: number }> = [
    {
      path: 'prototypes/1/r2/pages/p.json',
      source: '/rabbit/api/prototypes/1/pages/p.json',
      sha256: 'ab'.repeat(32),
      size: 0,
      contentType: 'application/json',
      lastModified: null,
      offset: 12_345_678_901,
    },
    // Commas, colons, braces, quotes, backslashes and non-ASCII inside values; an HTTP date has a comma.
    {
      path: 'assets/x.css',
      source: '/css/a,b:{c}.css',
      sha256: 'cd'.repeat(32),
      size: 17,
      contentType: 'text/css; charset="utf-8", q={1}',
      lastModified: 'Tue, 15 Nov 1994 08:12:31 GMT',
    },
    // Values that look like the offset member, with and without the real one after them.
    {
      path: 'a/b.json',
      source: '/x',
      sha256: '01'.repeat(32),
      size: 2,
      contentType: 'application/json',
      lastModified: ',"offset":5}',
      offset: 0,
    },
    {
      path: 'a/c.json',
      source: '/y',
      sha256: '02'.repeat(32),
      size: 2,
      contentType: 'x',
      lastModified: null,
      generatedFrom: '1,"offset":5',
    },
    {
      path: 'overview/prototype-1.html',
      source: 'generated',
      sha256: 'ef'.repeat(32),
      size: 1,
      contentType: 'text/html \\ "\\"" \u2028 日本 🐇 \u0001',
      lastModified: null,
      generatedFrom: 'manifest.json',
    },
  ];

  it.each(entries.flatMap((entry) => [2, 10].map((depth) => ({ entry, depth }))))(
    'writes $entry.path at depth $depth exactly as JSON.stringify would',
    ({ entry, depth }) => {
      const { offset: _offset, ...listed } = entry;
      const line = Buffer.from(JSON.stringify(entry), 'utf8');
      const expected = Buffer.from(indent(JSON.stringify(listed, null, 2), depth), 'utf8');
      // Written after three bytes of something else.
      const out = Buffer.alloc(3 + line.length * (depth + 4) + depth + 2, '-');
      const end = prettyEntry(line, depth, out, 3);
      expect(out.subarray(0, end).toString('utf8')).toBe(`---${expected.toString('utf8')}`);
    },
  );
});
