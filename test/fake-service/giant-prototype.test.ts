import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import {
  countExportRequests,
  datasetForResources,
  exportPaths,
  FakeStore,
  FIRST_ORDINARY_ID,
  startFakeService,
  type FakeService,
} from '../../src/fake-service/index.js';
import { getJson } from './helpers.js';

/** The bench's giant shape: one prototype of 250,000 resources, planned like any big account. */
const GIANT = datasetForResources(250_000, { prototypes: 1 });
const GIANT_ID = String(FIRST_ORDINARY_ID);

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

function digest(paths: Iterable<string>): { count: number; sha256: string } {
  const hash = createHash('sha256');
  let count = 0;
  for (const path of paths) {
    hash.update(path).update('\n');
    count++;
  }
  return { count, sha256: hash.digest('hex') };
}

describe('one giant prototype', () => {
  test('250,000 resources exactly, 2,380 pages of 100 elements in one ordinary prototype', () => {
    expect(GIANT).toMatchObject({ prototypes: 1, pagesPerPrototype: 2380, elementsPerPage: 100 });
    const store = new FakeStore(1, GIANT, () => 0);
    expect(countExportRequests(store)).toBe(250_000);
    const paths = [...exportPaths(store)];
    expect(paths).toHaveLength(250_000);
    const inGiant = paths.filter((path) => path.startsWith(`/rabbit/api/prototypes/${GIANT_ID}`));
    // 4 lists and metadata, 3 discussions, 2,380 x (5 + 100) page resources, 2 x (2 + 3) layer ones.
    expect(inGiant).toHaveLength(4 + 3 + 2380 * 105 + 2 * 5);
    expect(new Set(paths).size).toBe(paths.length);
    expect(store.prototypeIds()).toEqual(['3', '17', '42', GIANT_ID]);
  });

  test('is the same account from the same seed, and another from another seed', () => {
    const once = digest(exportPaths(new FakeStore(1, GIANT, () => 0)));
    expect(digest(exportPaths(new FakeStore(1, GIANT, () => 0)))).toEqual(once);
    const other = new FakeStore(2, GIANT, () => 0);
    expect(other.page(GIANT_ID, 'page2380')).not.toEqual(new FakeStore(1, GIANT, () => 0).page(GIANT_ID, 'page2380'));
  });

  test('serves its last page and element, generated on demand, identically twice', async () => {
    service = await startFakeService({ dataset: GIANT });
    const last = `prototypes/${GIANT_ID}/pages/page2380`;
    const elements = await getJson<string[]>(service, `${last}/elements.json`);
    expect(elements).toHaveLength(100);
    // Layers take element1 to element6; pages are numbered on from there.
    expect(elements.at(-1)).toBe(`element${6 + 2380 * 100}`);
    const element = await getJson(service, `${last}/elements/${elements.at(-1)}.json`);
    expect(element).toMatchObject({ id: elements.at(-1) });
    const pages = await getJson<string[]>(service, `prototypes/${GIANT_ID}/pages.json`);
    expect(pages).toHaveLength(2380);
    expect([pages[0], pages.at(-1)]).toEqual(['page0001', 'page2380']);
    expect(await getJson(service, `${last}.json`)).toEqual(await getJson(service, `${last}.json`));
  });
});
