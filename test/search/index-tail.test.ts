import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchArchive, type SearchEvent } from '../../src/search/search-archive.js';
import { IndexTail } from '../../src/search/index-tail.js';
import { partsFile } from '../../src/search/search-record.js';
import { placesOf } from '../../src/site/search-places.js';
import { requireTool, python } from '../helpers/tools.js';
import { BARE_MANIFEST, SHOP_PART } from './crafted-index.js';
import { searchArchives } from './search-archive-fixture.js';

/**
 * Zips written by Python's zipfile in the order the export writes its entries: the prototypes'
 * files, then search/, then index.html and the manifest (one that lists nothing).
 */

const WRITE_ZIP = `
import sys, zipfile
out, with_index = sys.argv[1], sys.argv[2] == '1'
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for i in range(300):
        z.writestr('prototypes/5/r1/pages/p%d.json' % i, '{"name": "page %d"}' % i)
    if with_index:
        z.writestr('search/search-box.js', '// box')
        z.writestr('search/prototype-5.js', open(sys.argv[3]).read())
        z.writestr('search/index.js', open(sys.argv[4]).read())
    z.writestr('index.html', '<!doctype html>')
    z.writestr('manifest.json', open(sys.argv[5]).read())
`;

let dir: string;

async function makeZip(name: string, withIndex: boolean): Promise<string> {
  const out = join(dir, name);
  await writeFile(join(dir, 'part.js'), SHOP_PART);
  await writeFile(join(dir, 'parts.js'), partsFile(['5']));
  await writeFile(join(dir, 'manifest.json'), BARE_MANIFEST);
  const files = ['part.js', 'parts.js', 'manifest.json'].map((name) => join(dir, name));
  execFileSync(python(), ['-c', WRITE_ZIP, out, withIndex ? '1' : '0', ...files]);
  return out;
}

/** Overwrites the signature of the central directory's first record: a zip no reader of the whole directory opens. */
async function damageDirectoryFront(path: string): Promise<void> {
  const bytes = await readFile(path);
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const directory = bytes.readUInt32LE(eocd + 16);
  expect(bytes.readUInt32LE(directory)).toBe(0x02014b50);
  bytes.writeUInt32LE(0, directory);
  await writeFile(path, bytes);
}

beforeAll(async () => {
  requireTool('python3');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-index-tail-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the search index found from the central directory tail', () => {
  it('reads the parts without reading the directory before them', async () => {
    const zip = await makeZip('indexed.zip', true);
    await damageDirectoryFront(zip);
    const events: SearchEvent[] = [];
    for await (const event of searchArchive({ archive: zip, query: 'coupon', places: placesOf })) events.push(event);
    expect(events.map((e) => (e.type === 'hit' ? e.hit.id : e.summary))).toEqual([
      'e1',
      { hits: 1, prototypes: 1, indexed: 1, scanned: 0 },
    ]);
  });

  it('finds every search/ entry and the manifest after them, and their bytes are the ones zipped', async () => {
    const tail = await IndexTail.open(await makeZip('whole.zip', true));
    try {
      expect(tail?.has('search/index.js')).toBe(true);
      expect(tail?.has('search/search-box.js')).toBe(true);
      expect(tail?.has('index.html')).toBe(false);
      expect((await tail?.readEntry('manifest.json', 1 << 20))?.toString('utf8')).toBe(BARE_MANIFEST);
      expect((await tail?.readEntry('search/prototype-5.js', 1 << 20))?.toString('utf8')).toBe(SHOP_PART);
    } finally {
      tail?.close();
    }
  });

  it("checks an export's manifest through the tail too, where the export writes it", async () => {
    const { archive } = await searchArchives(dir);
    const hits = async (): Promise<unknown[]> => {
      const events: SearchEvent[] = [];
      for await (const event of searchArchive({ archive, query: 'coupon', places: placesOf })) events.push(event);
      return events;
    };
    const whole = await hits();
    expect(whole.length).toBeGreaterThan(1);
    // A zip no reader of the whole directory opens: the manifest's head is read through the tail or not at all.
    await damageDirectoryFront(archive);
    expect(await hits()).toEqual(whole);
  });

  it('is not there for an archive without an index, which is then opened whole', async () => {
    const zip = await makeZip('plain.zip', false);
    expect(await IndexTail.open(zip)).toBeUndefined();
    await damageDirectoryFront(zip);
    await expect(
      (async () => {
        for await (const event of searchArchive({ archive: zip, query: 'coupon', places: placesOf })) void event;
      })(),
    ).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT' });
  });
});
