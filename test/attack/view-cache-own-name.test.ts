// Shows: pages with one body in one prototype get one view even when a link resolves to the page itself as `http:` (scheme-relative to the page's own URL), so page2's view links to page1's.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, type DefaultTreeAdapterTypes } from 'parse5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { readArchive } from '../helpers/archive.js';
import { closeAll, startHostileFront, type Listening } from '../viewer/hostile-front.js';

/**
 * Every page rendering is answered with the same body, whose links name the page itself as a
 * browser resolves them against the page's own URL: `http:` with nothing after it, `http:?q`,
 * `HTTP:#x` (a special scheme the same as the base's is a relative reference). Each view's link
 * must lead to that page's own view, never to the view of the first page built with that body.
 */
const BODY =
  '<html><head><title>same</title></head><body>' +
  '<a id="bare" href="http:">bare</a><a id="query" href="http:?q">query</a><a id="hash" href="HTTP:#x">hash</a>' +
  '</body></html>';

let service: FakeService;
let front: Listening | undefined;
let dir: string;
const viewLinks = new Map<string, Record<string, string | undefined>>();

function linksOf(html: string): Record<string, string | undefined> {
  const found: Record<string, string | undefined> = {};
  const walk = (node: DefaultTreeAdapterTypes.Node): void => {
    if ('tagName' in node && node.tagName === 'a') {
      const id = node.attrs.find((a) => a.name === 'id')?.value as string;
      found[id] = node.attrs.find((a) => a.name === 'href')?.value;
    }
    if ('childNodes' in node) node.childNodes.forEach(walk);
  };
  walk(parse(html));
  return found;
}

beforeAll(async () => {
  front = await startHostileFront({ upstream: () => service.baseUrl, pageFor: () => BODY });
  service = await startFakeService({
    seed: 1,
    advertisedBaseUrl: front.origin,
    dataset: { prototypes: 1, pagesPerPrototype: 20, elementsPerPage: 1, pngWidth: 8, pngHeight: 8 },
  });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-view-cache-'));
  const out = join(dir, 'same.zip');
  const result = await exportAccount({ out, baseUrl: front.origin, keys: [service.keys.readOnly] });
  expect(result.complete).toBe(true);
  const { entries } = await readArchive(out);
  for (const [name, { data }] of entries)
    if (name.endsWith('.view.html') && name.includes('/pages/')) viewLinks.set(name, linksOf(data.toString('utf8')));
}, 120_000);

afterAll(async () => {
  await closeAll(front, service);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('identical page bodies whose links resolve against the page itself', () => {
  it('some prototype has two or more such pages', () => {
    const folders = [...viewLinks.keys()].map((name) => name.slice(0, name.lastIndexOf('/')));
    expect(folders.length).toBeGreaterThan(new Set(folders).size);
  });

  it("each view's self links lead to its own view", () => {
    const wrong = [];
    for (const [name, links] of viewLinks) {
      const own = name.slice(name.lastIndexOf('/') + 1);
      const expected = { bare: own, query: own, hash: `${own}#x` };
      for (const [id, href] of Object.entries(links))
        if (href !== undefined && href !== expected[id as keyof typeof expected]) wrong.push({ name, id, href });
    }
    expect(wrong).toEqual([]);
  });
});
