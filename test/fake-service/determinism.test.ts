import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
import type { CrawledBody } from './helpers.js';
import { crawl, getJson } from './helpers.js';

/** XHTML embeds the service's own address, the one thing two instances cannot share. */
function normalised(service: FakeService, bodies: Map<string, CrawledBody>): Map<string, string> {
  return new Map(
    [...bodies].map(([path, { body }]) => [path, body.toString('latin1').split(service.baseUrl).join('BASE')]),
  );
}

describe('seeds', () => {
  const services: FakeService[] = [];
  let a: FakeService;
  let b: FakeService;
  let c: FakeService;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      startFakeService({ seed: 5 }),
      startFakeService({ seed: 5 }),
      startFakeService({ seed: 6 }),
    ]);
    services.push(a, b, c);
  });
  afterAll(() => Promise.all(services.map((s) => s.close())));

  test('the same seed serves the same bytes everywhere; another seed does not', async () => {
    const [bodiesA, bodiesB, bodiesC] = await Promise.all([crawl(a), crawl(b), crawl(c)]);
    expect(normalised(b, bodiesB)).toEqual(normalised(a, bodiesA));
    const differing = [...bodiesA.keys()].filter(
      (path) => !bodiesA.get(path)!.body.equals(bodiesC.get(path)?.body ?? Buffer.alloc(0)),
    );
    expect(differing).toContain('prototypes/3.json');
    expect(differing).toContain('prototypes/3/pages/page0001.png');
  });

  test('keys follow the seed', () => {
    expect(b.keys).toEqual(a.keys);
    expect(c.keys.readWrite).not.toBe(a.keys.readWrite);
  });

  test('a body is byte-identical between requests', async () => {
    const first = await crawl(a);
    const second = await crawl(a);
    for (const [path, { body }] of first) expect(second.get(path)!.body.equals(body), path).toBe(true);
  });
});

describe('default sample', () => {
  let service: FakeService;
  beforeAll(async () => {
    service = await startFakeService();
  });
  afterAll(() => service.close());

  test('a full crawl of the API takes a few hundred requests, all answered 200', async () => {
    service.stats.reset();
    const bodies = await crawl(service);
    for (const [path, { status }] of bodies) expect(status, path).toBe(200);
    expect(bodies.size).toBe(service.stats.requests);
    // 192 API requests; the five static assets the XHTML points at come on top.
    expect(service.stats.requests).toBe(192);
  });

  test('sizes as documented: 5 prototypes, with the awkward ones first', async () => {
    expect(await getJson(service, 'prototypes.json')).toEqual([3, 17, 42, 1001, 1002]);
    const ordinary = service.store.prototype(1001)!;
    expect(ordinary.pages).toHaveLength(4);
    expect(ordinary.pages.every((page) => page.elements.length === 5)).toBe(true);
    expect(ordinary.layers.map((layer) => layer.elements.length)).toEqual([3, 3]);
    expect(ordinary.discussions).toHaveLength(3);
  });
});

describe('dataset options', () => {
  test('scale the ordinary prototypes and can drop the legacy one', async () => {
    const service = await startFakeService({
      dataset: {
        prototypes: 12,
        pagesPerPrototype: 2,
        elementsPerPage: 0,
        layersPerPrototype: 0,
        discussionsPerPrototype: 0,
        legacyPagesList: false,
      },
    });
    try {
      const ids = await getJson<number[]>(service, 'prototypes.json');
      expect(ids).toHaveLength(14);
      expect(ids).not.toContain(42);
      expect(await getJson(service, 'prototypes/1012/pages.json')).toEqual(['page0001', 'page0002']);
      expect(await getJson(service, 'prototypes/1012/pages/page0002/elements.json')).toEqual([]);
      expect(await getJson(service, 'prototypes/1012/layers.json')).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
