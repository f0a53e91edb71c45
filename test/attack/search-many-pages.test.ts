import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { searchArchive, type SearchHit } from '../../src/search/search-archive.js';
import { placeHash } from '../../src/site/body-places.js';
import { placesOf } from '../../src/site/search-places.js';

/** Pages of one prototype, their ids picked so their bodies' names share a slot under one basis. */
const PAGES = 400;

function pickedPageIds(): string[] {
  const mask = (1 << 12) - 1;
  const slotOf = (id: string) => placeHash(Buffer.from(`pages/${id}.json`, 'utf8'), 12345) & mask;
  const target = slotOf('page1');
  const ids: string[] = [];
  for (let n = 1; ids.length < PAGES; n++) if (slotOf(`page${n}`) === target) ids.push(`page${n}`);
  return ids;
}

let dir: string;
let archive: string;
let prototype: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-pages-'));
  const service = await startFakeService({ seed: 1 });
  try {
    const id = service.store.addPrototype('Many pages');
    prototype = String(id);
    for (const pageId of pickedPageIds()) {
      const added = service.store.addPage(id, `Page ${pageId}`);
      service.store.addElement(id, added, {
        type: 'text',
        text: `needle on ${pageId}`,
        position: { x: 1, y: 1 },
        dimensions: { width: 10, height: 10 },
      });
      const record = service.store.page(id, added);
      if (record === undefined) throw new Error(`no page ${added}`);
      record.id = pageId;
    }
    archive = join(dir, 'archive.zip');
    // Only that prototype, and only the page bodies search reads: the renderings of 400 pages are
    // not what is tested, and fetching and zipping them was most of this file's time.
    const result = await exportAccount({
      out: archive,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      prototypes: new Set([prototype]),
      formats: new Set(['json']),
    });
    expect(result.complete).toBe(true);
  } finally {
    await service.close();
  }
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function hits(useIndex: boolean): Promise<{ hits: SearchHit[]; indexed: number; scanned: number }> {
  const found: SearchHit[] = [];
  let indexed = 0;
  let scanned = 0;
  for await (const event of searchArchive({
    archive,
    query: 'needle',
    prototypes: [prototype],
    places: placesOf,
    useIndex,
  }))
    if (event.type === 'hit') found.push(event.hit);
    else ({ indexed, scanned } = event.summary);
  return { hits: found, indexed, scanned };
}

describe('search over a prototype whose page ids were picked to collide', () => {
  it('finds every page through the index, and the same as reading the bodies', async () => {
    const withIndex = await hits(true);
    const without = await hits(false);
    expect({ indexed: withIndex.indexed, scanned: without.scanned }).toEqual({ indexed: 1, scanned: 1 });
    expect(withIndex.hits).toHaveLength(PAGES);
    expect(new Set(withIndex.hits.map((hit) => hit.page?.id)).size).toBe(PAGES);
    expect(withIndex.hits).toEqual(without.hits);
  }, 120_000);
});
