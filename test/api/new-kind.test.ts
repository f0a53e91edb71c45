import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { entryPathOf, parseEntryPath, parseSource, sourceOf } from '../../src/api/entry-paths.js';
import { FORMATS, ITEM_CATEGORIES, RENDERING_FORMATS } from '../../src/api/kind-lists.js';
import { archivePathFor } from '../../src/api/paths.js';
import { KIND_NAMES, RESOURCE_KINDS, type Format, type KindName } from '../../src/api/resource-kinds.js';
import type * as ResourceKinds from '../../src/api/resource-kinds.js';
import { parseFormats } from '../../src/cli/export-flags.js';
import { diffArchives } from '../../src/diff/diff-archives.js';
import { fileOf } from '../../src/diff/file-kinds.js';
import { exportAccount } from '../../src/export/export-account.js';
import { LINK_KINDS } from '../../src/links/link-rules.js';
import { listLinks } from '../../src/links/links-archive.js';
import { checkAgainstLive } from '../../src/live-check/check-live.js';
import { liveResourceOf } from '../../src/live-check/resource-kinds.js';
import { listArchive } from '../../src/verify/list-archive.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { readArchive } from '../helpers/archive.js';
import { useFakeService } from '../helpers/fake-service.js';
import { SAMPLE_IDS } from './sample-ids.js';

/**
 * docs/design.md, "Adding a resource kind", made true: this file runs the program with a copy of
 * the table of resource kinds that has one more row, the page comments exactly as the page writes
 * them (read from it), added to the page's `children` as it says, and nothing else changed. A
 * second row, a rendering in a format of its own, shows what a `format` adds. Every list of kinds
 * the readers keep is derived from the table, so each picks the rows up; an export through a
 * service that serves them stores them where the table says, and verify, ls, diff, links and the
 * live check know them.
 *
 * vi.mock needs a module graph of its own: vitest.config.ts runs this file isolated.
 */
vi.mock('../../src/api/resource-kinds.js', async (importOriginal) => {
  const table = await importOriginal<typeof ResourceKinds>();
  const { readFile } = await import('node:fs/promises');
  const design = await readFile(new URL('../../docs/design.md', import.meta.url), 'utf8');
  const section = design.slice(design.indexOf('## Adding a resource kind'));
  const block = /```ts no-run\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/design.md shows no row in "Adding a resource kind"');
  const page = table.RESOURCE_KINDS.page;
  const PAGE = (page.api as string).slice(0, -'.json'.length);
  // The row as the page writes it: an object's member, with `${PAGE}` in its templates.
  const documented = new Function('PAGE', `return {${block}};`)(PAGE) as Record<string, unknown>;
  const rows = {
    ...table.RESOURCE_KINDS,
    page: { ...page, children: [...page.children, 'page-comments', 'page-svg'] },
    ...documented,
    'page-svg': {
      api: `${PAGE}.svg`,
      scope: 'revision',
      entry: 'pages/{page}.svg',
      item: 'page',
      parent: 'page',
      children: [],
      body: 'html',
      format: 'svg',
      category: 'renderings',
      categoryId: '{page}.svg',
    },
  };
  return { ...table, RESOURCE_KINDS: rows, KIND_NAMES: Object.keys(rows) };
});

const COMMENTS = 'page-comments' as KindName;
const SVG = 'page-svg' as KindName;
const SVG_FORMAT = 'svg' as Format;
const IDS = { prototype: SAMPLE_IDS.prototype, page: SAMPLE_IDS.page };

describe('a kind added to the table, and nothing else', () => {
  it('is the row docs/design.md shows, a child of the page', () => {
    expect(KIND_NAMES).toContain(COMMENTS);
    expect(RESOURCE_KINDS[COMMENTS]).toMatchObject({ entry: 'pages/{page}/comments.json', parent: 'page' });
    expect(RESOURCE_KINDS.page.children).toContain(COMMENTS);
  });

  it('is built and parsed where the page says it goes', () => {
    const source = sourceOf(COMMENTS, IDS);
    const entry = entryPathOf(COMMENTS, IDS, 17);
    expect(source).toBe('/rabbit/api/prototypes/4711/pages/page0001/comments.json');
    expect(entry).toBe('prototypes/4711/r17/pages/page0001/comments.json');
    expect(archivePathFor(source, 17)).toBe(entry);
    expect(parseSource(source)).toEqual({ kind: COMMENTS, ...IDS });
    expect(parseEntryPath(entry)).toEqual({ kind: COMMENTS, ...IDS, revision: 17 });
  });

  it('is in the lists of kinds the readers keep', () => {
    const source = sourceOf(COMMENTS, IDS);
    // diff: the category its row gives, named by its path below the prototype.
    expect(fileOf('4711', source)).toEqual({ category: 'other', id: 'pages/page0001/comments.json' });
    // The live check: a kind of its own, not one more page.
    expect(liveResourceOf(source)).toEqual({
      type: 'resource',
      kind: COMMENTS,
      prototype: '4711',
      item: 'page',
      id: 'page0001',
      body: 'json',
    });
    // ls: no column, as a page's comments are not a listed item.
    expect(ITEM_CATEGORIES).toEqual(['pages', 'layers', 'elements', 'discussions']);
  });

  it('with a format, is a --formats choice, a link kind and a rendering to the live check', () => {
    expect(RENDERING_FORMATS).toContain(SVG_FORMAT);
    expect(FORMATS).toContain(SVG_FORMAT);
    expect(LINK_KINDS).toContain(SVG_FORMAT);
    expect(parseFormats('json,svg')).toEqual(new Set(['json', 'svg']));
    expect(liveResourceOf(sourceOf(SVG, IDS))).toMatchObject({ kind: 'rendering', format: 'svg', body: 'html' });
    expect(fileOf('4711', sourceOf(SVG, IDS))).toEqual({ category: 'renderings', id: 'page0001.svg' });
  });
});

let service: FakeService;
let dir: string;
useFakeService(
  { seed: 44, dataset: { prototypes: 1, pagesPerPrototype: 2 } },
  (fixture) => ({ service, dir } = fixture),
);

/**
 * The service with the new kinds: the fake service's answers, and for every page its comments
 * (`says` picks what those at a source say) and its SVG rendering.
 */
async function serviceWithComments(says: (source: string) => string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    if (path.endsWith('/comments.json')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ comments: [says(path)] }));
      return;
    }
    if (path.endsWith('.svg')) {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
      return;
    }
    const upstream = request(
      `${service.baseUrl}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function exported(out: string, url: string): Promise<void> {
  const result = await exportAccount({
    out,
    baseUrl: url,
    keys: [service.keys.readOnly],
    concurrency: 2,
    formats: new Set<Format>(['json', 'html', SVG_FORMAT]),
  });
  expect(result.complete).toBe(true);
}

/** Every entry of the zip (read by yauzl) with the kind its name parses to, and its body. */
async function entriesOf(path: string): Promise<{ path: string; kind: string | undefined; data: Buffer }[]> {
  const { entries } = await readArchive(path);
  return [...entries].map(([name, { data }]) => ({ path: name, kind: parseEntryPath(name)?.kind, data }));
}

describe('an export through a service that serves the new kinds', () => {
  it('stores them where the table says, and verify, ls, diff, links and the live check know them', async () => {
    const monday = join(dir, 'monday.zip');
    const tuesday = join(dir, 'tuesday.zip');
    const same = await serviceWithComments(() => 'first!');
    try {
      await exported(monday, same.url);
      const entries = await entriesOf(monday);
      const pages = entries.filter((entry) => entry.kind === 'page');
      const comments = entries.filter((entry) => entry.kind === COMMENTS);
      expect(pages.length).toBeGreaterThan(1);
      expect(comments.map((entry) => entry.path).sort()).toEqual(
        pages.map((entry) => entry.path.replace(/\.json$/, '/comments.json')).sort(),
      );
      expect(entries.filter((entry) => entry.kind === SVG)).toHaveLength(pages.length);
      for (const entry of comments) expect(JSON.parse(entry.data.toString('utf8'))).toEqual({ comments: ['first!'] });

      expect((await verifyArchive(monday)).ok).toBe(true);

      // ls: the comments are resources of their prototypes, and no page.
      const rows = await listArchive(monday);
      expect(rows.reduce((sum, row) => sum + row.pages, 0)).toBe(pages.length);

      // links: the comments answer their API URL, the SVGs are renderings of their own kind.
      let csv = '';
      const summary = await listLinks({ archive: monday, format: 'csv', write: (chunk) => void (csv += chunk) });
      expect(summary.byKind[SVG_FORMAT]).toBe(pages.length);
      for (const entry of comments) expect(csv).toContain(`,${entry.path}\r\n`);

      // The live check: every page's comments compared, counted as a kind of their own, never as a page.
      const report = await checkAgainstLive({
        archive: monday,
        baseUrl: same.url,
        keys: [service.keys.readOnly],
        seed: 44,
      });
      expect(report.byKind[COMMENTS]).toMatchObject({ checked: pages.length, matched: pages.length });
      expect(report.byKind.page?.checked).toBe(pages.length);

      // diff: one page's comments changed, counted as the row's category says.
      const changed = parseEntryPath(comments[0]?.path ?? '') as { prototype: string; page: string };
      const source = sourceOf(COMMENTS, changed);
      const edited = await serviceWithComments((path) => (path === source ? 'edited' : 'first!'));
      try {
        await exported(tuesday, edited.url);
      } finally {
        edited.server.close();
      }
      const diff = await diffArchives(monday, tuesday);
      expect(diff.changed.map((change) => [change.id, change.changes.other.changed])).toEqual([
        [changed.prototype, [`pages/${changed.page}/comments.json`]],
      ]);
    } finally {
      same.server.close();
    }
  });
});
