import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import type { DatasetOptions, FakeService } from '../../src/fake-service/index.js';
import {
  countExportRequests,
  datasetForResources,
  exportPaths,
  FakeStore,
  startFakeService,
} from '../../src/fake-service/index.js';
import { FULL_EXPORT_REQUESTS, walkService } from '../helpers/oracle.js';
import { crawl, getJson, send } from './helpers.js';

/**
 * The data is generated lazily, a page at a time, yet must stay what the eager generator served:
 * these digests were taken from a crawl of the eager generator (before the lazy one existed), and
 * taken again when the XHTML views moved to the shared escaper: the 48 bodies that changed then
 * were XHTML only, each parsing to the same document as before.
 * Status and body are digested (lastModification is in the JSON); the service's own address is not.
 */
const GOLDEN: Array<[number, Partial<DatasetOptions>, number, string]> = [
  [1, {}, 192, '6ef6f01c78e5b7d7f5a6d2b2ddd78f8bd83b49b31629f0d33e4ae14e0f49388e'],
  [
    5,
    {
      prototypes: 3,
      pagesPerPrototype: 7,
      elementsPerPage: 9,
      layersPerPrototype: 3,
      elementsPerLayer: 4,
      discussionsPerPrototype: 5,
    },
    453,
    '980df99596f4a5661aa7ea81c2ff8b11b63f2a92fdfa2e4c4877233fbac7fb73',
  ],
  [2, { prototypes: 2, pagesPerPrototype: 0 }, 106, '5a8e18d9c2e04dcce0e242b3ddebcc95129de80a0e37af5e0eca66d1d60822de'],
];

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

async function digestOf(s: FakeService): Promise<{ count: number; digest: string }> {
  const bodies = await crawl(s);
  const hash = createHash('sha256');
  for (const path of [...bodies.keys()].sort()) {
    const { status, body } = bodies.get(path)!;
    hash.update(`${path}\0${status}\0`).update(body.toString('latin1').split(s.baseUrl).join('BASE')).update('\0');
  }
  return { count: bodies.size, digest: hash.digest('hex') };
}

describe('lazily generated data', () => {
  test.each(GOLDEN)(
    'seed %i, dataset %j: the same bytes as the eager generator',
    async (seed, dataset, count, digest) => {
      // Pages that name the service's host, as when the digests were taken (its address is replaced above).
      service = await startFakeService({ seed, dataset, pagesNameHost: true });
      expect(await digestOf(service)).toEqual({ count, digest });
    },
  );
});

describe('a big account', () => {
  test('pages evicted from the caches come back identical', async () => {
    // More pages than the store keeps generated, read twice: the second reads regenerate them.
    service = await startFakeService({
      dataset: { prototypes: 1, pagesPerPrototype: 700, elementsPerPage: 2, discussionsPerPrototype: 0 },
    });
    const read = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const page of ['page0001', 'page0350', 'page0700']) {
        const meta = await getJson(service!, `prototypes/1001/pages/${page}.json`);
        const elements = await getJson<string[]>(service!, `prototypes/1001/pages/${page}/elements.json`);
        out.push(
          JSON.stringify([
            meta,
            elements,
            await getJson(service!, `prototypes/1001/pages/${page}/elements/${elements[1]}.json`),
          ]),
        );
      }
      return out;
    };
    const first = await read();
    for (let j = 1; j <= 700; j++)
      await getJson(service, `prototypes/1001/pages/page${String(j).padStart(4, '0')}/elements.json`);
    expect(await read()).toEqual(first);
    expect(first[2]).toContain('"id":"element1406"');
  });

  test('a write to a generated prototype builds it in full, keeps the rest as it was and is served', async () => {
    service = await startFakeService({ dataset: { prototypes: 3, pagesPerPrototype: 5, elementsPerPage: 4 } });
    const before = await getJson<string[]>(service, 'prototypes/1002/pages/page0003/elements.json');
    const untouched = await getJson(service, 'prototypes/1002/pages/page0004.json');
    const created = await send(service, 'POST', 'prototypes/1002/pages/page0003/elements.json', {
      type: 'button',
      text: 'new',
    });
    expect(created.status).toBe(201);
    const after = await getJson<string[]>(service, 'prototypes/1002/pages/page0003/elements.json');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    expect(await getJson(service, 'prototypes/1002/pages/page0004.json')).toEqual(untouched);
    expect(service.store.prototype(1002)!.pages[2]!.elements.map((e) => e.id)).toEqual(after);
  });

  test('exportPaths names exactly what an independent walk fetches', async () => {
    service = await startFakeService();
    const walked = await walkService(service.baseUrl, service.keys.readOnly);
    const paths = [...exportPaths(service.store)];
    expect(new Set(paths)).toEqual(new Set(walked.keys()));
    expect(paths).toHaveLength(FULL_EXPORT_REQUESTS);
    expect(countExportRequests(service.store)).toBe(FULL_EXPORT_REQUESTS);
  });

  test('a million resources are planned, not built: counting them generates no page', () => {
    const dataset = datasetForResources(1_000_000);
    const store = new FakeStore(1, dataset, () => 0);
    const count = countExportRequests(store);
    expect(Math.abs(count - 1_000_000)).toBeLessThan(dataset.pagesPerPrototype * (dataset.elementsPerPage + 5));
    expect(dataset).toMatchObject({ pngWidth: 64, pngHeight: 48 });
    // The count is kept apart from the enumeration for speed; they must agree, written-to or not.
    const small = new FakeStore(1, { ...dataset, prototypes: 2 }, () => 0);
    small.addElement(1002, 'page0007', { type: 'button' });
    expect(countExportRequests(small)).toBe([...exportPaths(small)].length);
  });
});
