import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchArchive, type SearchEvent } from '../../src/search/search-archive.js';
import { partHead, PART_TAIL, partsFile, recordLine, type SearchRecord } from '../../src/search/search-record.js';
import { placesOf } from '../../src/site/search-places.js';
import { requireTool, python } from '../helpers/tools.js';
import { BARE_MANIFEST } from '../search/crafted-index.js';

/**
 * Zips built byte by byte by Python in shapes no writer makes: central directory records that
 * share one local header, point into the directory, or claim gigabytes. `locals` are the stored
 * entries in file order; `records` the directory, each naming the local entry it points at, with
 * fields overridden (`off: -1` is the directory's own offset).
 */
const CRAFT = `
import struct, zlib, sys, json
spec = json.load(open(sys.argv[2]))
body = bytearray(); central = bytearray(); offs = []; datas = []
for name, text in spec['locals']:
    data = text.encode(); nb = name.encode()
    offs.append(len(body)); datas.append(data)
    body.extend(struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0x800, 0, 0, 0, zlib.crc32(data), len(data), len(data), len(nb), 0) + nb + data)
for name, li, over in spec['records']:
    data = datas[li]; nb = name.encode()
    f = dict(crc=zlib.crc32(data), csize=len(data), usize=len(data), off=offs[li])
    f.update(over)
    if f['off'] == -1: f['off'] = len(body)
    central.extend(struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 20, 20, 0x800, 0, 0, 0, f['crc'], f['csize'], f['usize'], len(nb), 0, 0, 0, 0, 0, f['off']) + nb)
n = len(spec['records'])
open(sys.argv[1], 'wb').write(body + central + struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, n, n, len(central), len(body), 0))
`;

type Spec = { locals: [string, string][]; records: [string, number, Record<string, number>][] };

const element = (text: string, extra: Partial<SearchRecord> = {}): string =>
  recordLine(
    {
      kind: 'element',
      field: 'text',
      page: 'p',
      layer: '',
      id: 'e1',
      target: 'prototypes/1/index.html',
      text,
      ...extra,
    },
    text.toLowerCase(),
  );

const part = (...lines: string[]): string => [partHead('1'), ...lines, PART_TAIL].join('');

let dir: string;

/** Crafts `spec` with a manifest after it, as the export writes one: search refuses an archive without. */
async function craft(name: string, spec: Spec): Promise<string> {
  const out = join(dir, name);
  const withManifest: Spec = {
    locals: [...spec.locals, ['manifest.json', BARE_MANIFEST]],
    records: [...spec.records, ['manifest.json', spec.locals.length, {}]],
  };
  await writeFile(join(dir, `${name}.json`), JSON.stringify(withManifest));
  execFileSync(python(), ['-c', CRAFT, out, join(dir, `${name}.json`)]);
  return out;
}

async function events(archive: string): Promise<SearchEvent[]> {
  const seen: SearchEvent[] = [];
  for await (const event of searchArchive({ archive, query: 'coupon', places: placesOf })) seen.push(event);
  return seen;
}

/** The message of a refusal of that part itself, not of the archive around it (its manifest is one). */
const corruptPart = (name: string): unknown => expect.stringMatching(new RegExp(`^search/${name}\\.js `));

beforeAll(async () => {
  requireTool('python3');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-tail-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('search over a crafted directory tail', () => {
  it('refuses parts listed under many names over the same bytes, as the whole-zip reader does', async () => {
    // One part under fifty names: read through the tail, each name inflated the same bytes again.
    const ids = Array.from({ length: 50 }, (_, i) => String(i + 1));
    const zip = await craft('shared.zip', {
      locals: [
        ['search/prototype-1.js', part(element('Coupon'))],
        ['search/index.js', partsFile(ids)],
      ],
      records: [
        ...ids.map((id): [string, number, Record<string, number>] => [`search/prototype-${id}.js`, 0, {}]),
        ['search/index.js', 1, {}],
      ],
    });
    await expect(events(zip)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT', data: { fault: 'overlap' } });
  });

  it('refuses a part whose data would lie inside the directory', async () => {
    const zip = await craft('inside.zip', {
      locals: [
        ['search/prototype-1.js', part(element('Coupon'))],
        ['search/index.js', partsFile(['1'])],
      ],
      records: [
        ['search/prototype-1.js', 0, { off: -1 }],
        ['search/index.js', 1, {}],
      ],
    });
    await expect(events(zip)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT', message: corruptPart('prototype-1') });
  });

  it('refuses a part or a parts list that claims gigabytes, before reading any of it', async () => {
    const huge = { csize: 0xfffffff0, usize: 0xfffffff0 };
    const locals: [string, string][] = [
      ['search/prototype-1.js', part(element('Coupon'))],
      ['search/index.js', partsFile(['1'])],
    ];
    const bigPart = await craft('big-part.zip', {
      locals,
      records: [
        ['search/prototype-1.js', 0, huge],
        ['search/index.js', 1, {}],
      ],
    });
    const bigList = await craft('big-list.zip', {
      locals,
      records: [
        ['search/prototype-1.js', 0, {}],
        ['search/index.js', 1, huge],
      ],
    });
    await expect(events(bigPart)).rejects.toMatchObject({
      code: 'ARCHIVE_CORRUPT',
      message: corruptPart('prototype-1'),
    });
    await expect(events(bigList)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT', message: corruptPart('index') });
  });

  it('takes ids and names such as __proto__ and ../x as text, and lists only ids of the archive shape', async () => {
    const zip = await craft('proto.zip', {
      locals: [
        [
          'search/prototype-1.js',
          part(
            recordLine(
              { kind: 'page', field: 'name', page: '__proto__', layer: '', id: '', target: 't', text: 'constructor' },
              'constructor',
            ),
            element('Coupon', { page: '__proto__', layer: 'constructor', id: '__proto__' }),
            `${'x'.repeat(300 * 1024)}\n`,
          ),
        ],
        ['search/index.js', 'rabbitSearchParts([\n"../x",\n"__proto__",\n"1",\n"1e3",\n"-1"\n]);\n'],
      ],
      records: [
        ['search/prototype-1.js', 0, {}],
        ['search/index.js', 1, {}],
      ],
    });
    const seen = await events(zip);
    expect(seen).toEqual([
      {
        type: 'hit',
        hit: expect.objectContaining({
          page: { id: '__proto__', name: 'constructor' },
          layer: { id: 'constructor', name: 'constructor' },
          id: '__proto__',
          match: 'Coupon',
        }),
      },
      { type: 'summary', summary: { hits: 1, prototypes: 1, indexed: 1, scanned: 0 } },
    ]);
  });
  it('searches a prototype the parts list names a thousand times once', async () => {
    const zip = await craft('repeated.zip', {
      locals: [
        ['search/prototype-1.js', part(element('Coupon'))],
        ['search/index.js', partsFile(Array.from({ length: 1000 }, () => '1'))],
      ],
      records: [
        ['search/prototype-1.js', 0, {}],
        ['search/index.js', 1, {}],
      ],
    });
    const seen = await events(zip);
    expect(seen.at(-1)).toEqual({ type: 'summary', summary: { hits: 1, prototypes: 1, indexed: 1, scanned: 0 } });
  });
  it('keeps a bounded number of page names: past it, a hit names its page by id', async () => {
    // 4,300 page names of 4,000 characters: more than the 16 Mi characters one prototype's names may hold.
    const pages = Array.from({ length: 4300 }, (_, i) =>
      recordLine(
        { kind: 'page', field: 'name', page: `p${i}`, layer: '', id: '', target: 't', text: `${i}`.padEnd(4000, 'n') },
        'n',
      ),
    );
    const zip = await craft('names.zip', {
      locals: [
        [
          'search/prototype-1.js',
          part(...pages, element('Coupon', { page: 'p0' }), element('Coupon', { page: 'p4299' })),
        ],
        ['search/index.js', partsFile(['1'])],
      ],
      records: [
        ['search/prototype-1.js', 0, {}],
        ['search/index.js', 1, {}],
      ],
    });
    const hits = (await events(zip)).flatMap((event) => (event.type === 'hit' ? [event.hit.page] : []));
    expect(hits).toEqual([
      { id: 'p0', name: '0'.padEnd(4000, 'n') },
      { id: 'p4299', name: 'p4299' },
    ]);
  });
});
