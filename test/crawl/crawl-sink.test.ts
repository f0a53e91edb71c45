import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccountCrawler, DEFAULT_SIZE_CAPS, type CrawlSink } from '../../src/crawl/crawl-account.js';
import type { FetchContext } from '../../src/crawl/fetch-resource.js';
import { Frontier } from '../../src/crawl/frontier.js';
import { HttpClient } from '../../src/client/http-client.js';
import { RETRY_DEFAULTS } from '../../src/client/retry-policy.js';
import type { RabbitError } from '../../src/core/errors.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { Spool } from '../../src/storage/spool.js';
import { useFakeService } from '../helpers/fake-service.js';
import { parseEntryPath, type ParsedPath } from '../../src/api/entry-paths.js';

// issue 35, item 4: the crawl wrote into the archive's manifest model and its hooks. It now tells
// a sink it owns what it found, so it runs with no archive at all: here, a sink that records.

let service: FakeService;
let dir: string;
useFakeService({ seed: 35 }, (fixture) => ({ service, dir } = fixture));

type Heard =
  | { what: 'prototype'; id: string; name: string | null; revision: number; lastUser: string | null }
  | { what: 'stored'; path: string; prototype: string | undefined; reusedFrom: string | undefined }
  | { what: 'failed'; source: string; code: string }
  | { what: 'notOffered'; source: string; status: number }
  | { what: 'listed'; ids: string[] }
  | { what: 'pagesListed'; id: string; count: number }
  | { what: 'prototypeDone'; id: string };

/** What each stored file said its entry name is (StoredFile's `parsed`), by its path. */
const parsedOf = new Map<string, ParsedPath | undefined>();

function recordingSink(heard: Heard[]): CrawlSink {
  return {
    prototype: (context, name, details) =>
      heard.push({ what: 'prototype', id: context.id, name, revision: context.revision, lastUser: details.lastUser }),
    stored: (file, prototype, reusedFrom) => {
      heard.push({ what: 'stored', path: file.path, prototype: prototype?.id, reusedFrom });
      parsedOf.set(file.path, file.parsed);
    },
    failed: (source, error: RabbitError) => heard.push({ what: 'failed', source, code: error.code }),
    notOffered: (source, status) => heard.push({ what: 'notOffered', source, status }),
    listed: (ids) => heard.push({ what: 'listed', ids }),
    pagesListed: (id, count) => heard.push({ what: 'pagesListed', id, count }),
    prototypeDone: (id) => heard.push({ what: 'prototypeDone', id }),
  };
}

async function crawl(heard: Heard[], formats: ReadonlySet<'json' | 'xhtml-plain'>): Promise<void> {
  const client = new HttpClient({ baseUrl: service.baseUrl, connections: 4, timeoutMs: 30_000 });
  const spool = new Spool(join(dir, 'spool'));
  await spool.init();
  const fetch: FetchContext = {
    client,
    spool,
    retry: { ...RETRY_DEFAULTS, attempts: 1 },
    signal: new AbortController().signal,
    random: () => 0.5,
    now: () => 0,
    onAttempt: () => undefined,
    sleep: () => Promise.resolve(),
  };
  const frontier = new Frontier({ concurrency: 4, ahead: client.queueAhead });
  const crawler = new AccountCrawler({
    fetch,
    frontier,
    sink: recordingSink(heard),
    keys: [service.keys.readOnly],
    caps: DEFAULT_SIZE_CAPS,
    formats,
    firstContactMs: 30_000,
  });
  try {
    await crawler.start();
    await frontier.drain();
  } finally {
    await client.close();
    await spool.close();
  }
}

const of = <W extends Heard['what']>(heard: Heard[], what: W): Extract<Heard, { what: W }>[] =>
  heard.filter((h): h is Extract<Heard, { what: W }> => h.what === what);

describe('the crawl tells its sink what it found', () => {
  it('every prototype, list, body, failure and milestone, with no archive behind it', async () => {
    const ids = service.store.prototypeIds();
    const first = ids[0]!;
    const page = service.store.pageIds(first)![0]!;
    const broken = `/rabbit/api/prototypes/${first}/pages/${page}.json`;
    service.setFaults({ paths: [{ path: broken, kind: '404' }] });
    const heard: Heard[] = [];
    await crawl(heard, new Set(['json']));

    expect(of(heard, 'listed')).toEqual([{ what: 'listed', ids: expect.arrayContaining(ids) as string[] }]);
    expect(
      of(heard, 'prototype')
        .map((h) => h.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(
      of(heard, 'prototypeDone')
        .map((h) => h.id)
        .sort(),
    ).toEqual([...ids].sort());
    for (const id of ids)
      expect(of(heard, 'pagesListed').find((h) => h.id === id)?.count).toBe(service.store.pageIds(id)!.length);
    // Each prototype's metadata comes before any of its bodies, its last task after all of them.
    for (const id of ids) {
      const at = heard.findIndex((h) => h.what === 'prototype' && h.id === id);
      const done = heard.findIndex((h) => h.what === 'prototypeDone' && h.id === id);
      const bodies = heard.flatMap((h, index) => (h.what === 'stored' && h.prototype === id ? [index] : []));
      expect(bodies.length).toBeGreaterThan(1);
      expect(Math.min(...bodies)).toBeGreaterThan(at);
      expect(Math.max(...bodies)).toBeLessThan(done);
    }
    const stored = of(heard, 'stored');
    expect(stored.find((h) => h.path === 'prototypes.json')).toEqual({
      what: 'stored',
      path: 'prototypes.json',
      prototype: undefined,
      reusedFrom: undefined,
    });
    expect(new Set(stored.map((h) => h.path)).size).toBe(stored.length);
    expect(of(heard, 'failed')).toEqual([{ what: 'failed', source: broken, code: 'HTTP_STATUS' }]);
    const firstBodies = stored.filter((h) => h.prototype === first).map((h) => h.path);
    expect(firstBodies.some((path) => path.endsWith(`/pages/${page}.json`))).toBe(false);
    expect(firstBodies.some((path) => path.includes(`/pages/${page}/`))).toBe(true);
  });

  it('an older page view the service does not offer is told as not offered, not as a failure', async () => {
    const ids = service.store.prototypeIds();
    const first = ids[0]!;
    const page = service.store.pageIds(first)![0]!;
    // Faults match the path alone: the view's query is not part of it.
    const path = `/rabbit/api/prototypes/${first}/pages/${page}.xhtml`;
    const view = `${path}?mode=plain`;
    service.setFaults({ paths: [{ path, kind: '404' }] });
    const heard: Heard[] = [];
    await crawl(heard, new Set(['json', 'xhtml-plain']));
    expect(of(heard, 'notOffered')).toEqual([{ what: 'notOffered', source: view, status: 404 }]);
    expect(of(heard, 'failed')).toEqual([]);
  });

  // issue 42: the model and the viewer read what each entry is from the crawl, which built its
  // name from the kind and ids, rather than parse every name again.
  it('each body of a prototype comes with its kind and ids, as its entry name parses', async () => {
    parsedOf.clear();
    const heard: Heard[] = [];
    await crawl(heard, new Set(['json', 'xhtml-plain']));
    const bodies = of(heard, 'stored').filter((h) => h.prototype !== undefined);
    expect(bodies.length).toBeGreaterThan(10);
    for (const { path } of bodies) expect(parsedOf.get(path), path).toEqual(parseEntryPath(path));
  });
});
