import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { STATIC_PATHS } from '../../src/fake-service/static-assets.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { ExportEvent } from '../../src/export/events.js';
import { scanHtml } from '../../src/site/requisites/html-refs.js';
import { scanCss } from '../../src/site/requisites/css-refs.js';
import { allFileEntries, type Manifest } from '../../src/manifest/types.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { entryNameOf, serveArchive } from '../../src/viewer/serve-archive.js';
import { readArchive } from '../helpers/archive.js';
import { assertValidManifest } from '../helpers/manifest-schema.js';
import { expectSameArchive } from '../export/since-helpers.js';
import { requireTool } from '../helpers/tools.js';
import { writeZip } from '../helpers/write-zip.js';
import { compareIds } from '../../src/api/ids.js';

let service: FakeService;
let dir: string;
let out: string;
let manifest: Manifest;
let entries: Map<string, { data: Buffer; method: number }>;
const events: ExportEvent[] = [];

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-viewer-'));
  out = join(dir, 'account.zip');
  const result = await exportAccount({
    out,
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
    onEvent: (event) => events.push(event),
  });
  expect(result.complete).toBe(true);
  ({ manifest, entries } = await readArchive(out));
});
afterAll(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

const text = (path: string): string => (entries.get(path)?.data ?? Buffer.alloc(0)).toString('utf8');
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('export with the offline viewer', () => {
  it('fetches each page asset once, without the key, and stores it content-addressed with its source', () => {
    for (const path of Object.values(STATIC_PATHS)) expect(service.stats.byPath.get(path), path).toBe(1);
    const assets = manifest.files.filter((f) => f.path.startsWith('assets/') && f.generatedFrom === undefined);
    expect(new Set(assets.map((a) => a.source))).toEqual(new Set(Object.values(STATIC_PATHS)));
    for (const asset of assets) {
      expect(asset.path).toMatch(/^assets\/[0-9a-f]{64}\.(css|png)$/);
      expect(asset.path).toContain(asset.sha256);
      expect(sha256(entries.get(asset.path)?.data as Buffer)).toBe(asset.sha256);
    }
  });

  it('fetches the page requisites while the crawl runs, not in a phase after it', () => {
    const at = (match: (event: ExportEvent) => boolean): number[] =>
      events.flatMap((event, i) => (match(event) ? [i] : []));
    const requisites = at((e) => e.type === 'phase' && e.phase === 'requisites')[0] as number;
    const elements = at((e) => e.type === 'response' && /\/elements\/[^/]+\.json$/.test(e.source));
    expect(requisites).toBeGreaterThan(0);
    for (const path of Object.values(STATIC_PATHS)) {
      const [asset] = at((e) => e.type === 'response' && e.source === path);
      // Stylesheets and the images they name both: the crawl's own drain waited for them.
      expect(asset, path).toBeLessThan(requisites);
    }
    // Scheduled when the first page rendering was stored, ahead of most of the crawl.
    expect(at((e) => e.type === 'response' && e.source === STATIC_PATHS.css)[0]).toBeLessThan(
      elements.at(-1) as number,
    );
  });

  it('makes each prototype viewable as soon as its crawl is done, not after the whole crawl', async () => {
    // Entry order as Info-ZIP lists the central directory: the order the zip was written in.
    requireTool('unzip');
    const { stdout } = await promisify(execFile)('unzip', ['-Z1', out]);
    const order = stdout.split('\n').filter((name) => name !== '');
    const at = (name: string): number => order.indexOf(name);
    const files = allFileEntries(manifest);
    const lastCrawled = Math.max(...files.filter((f) => f.source.startsWith('/rabbit/api/')).map((f) => at(f.path)));
    const overviews = Object.keys(manifest.prototypes).map((id) => at(`overview/prototype-${id}.html`));
    expect(overviews.every((i) => i >= 0)).toBe(true);
    // Several prototypes were built while others were still being fetched.
    expect(overviews.filter((i) => i < lastCrawled).length).toBeGreaterThan(1);
    for (const id of Object.keys(manifest.prototypes)) {
      // Each only once everything of its own is in: its page copies and overview follow its files.
      const own = files.filter((f) => f.path.startsWith(`prototypes/${id}/`));
      const last = Math.max(...own.filter((f) => f.generatedFrom === undefined).map((f) => at(f.path)));
      expect(own.some((f) => f.generatedFrom !== undefined)).toBe(true);
      for (const view of own.filter((f) => f.generatedFrom !== undefined))
        expect(at(view.path), view.path).toBeGreaterThan(last);
      expect(at(`overview/prototype-${id}.html`)).toBeGreaterThan(last);
    }
    expect(at('index.html')).toBeGreaterThan(lastCrawled);
  });

  it('waits for a stylesheet still arriving, and makes the same archive as when it arrives at once', async () => {
    // The first time, the stylesheet's body is held (its slow-body pauses wait on this) until a
    // prototype is done, while everything else answers at once: prototypes are done before it is
    // in, and must not be built without it. A run that would wait for it first (the fault this
    // guards against) is let go after 1.5 s, so it ends and the order asserted below fails.
    let release = (): void => undefined;
    const prototypeDone = new Promise<void>((resolve) => (release = resolve));
    const slow = await startFakeService({
      seed: 1,
      faults: { paths: [{ path: STATIC_PATHS.css, kind: 'slow-body', times: 1 }], slowBodyMs: 1500 },
      sleep: (ms) => Promise.race([prototypeDone, sleep(ms)]),
    });
    const late: ExportEvent[] = [];
    try {
      const first = await exportAccount({
        out: join(dir, 'slow.zip'),
        baseUrl: slow.baseUrl,
        keys: [slow.keys.readOnly],
        concurrency: 4,
        onEvent: (event) => {
          late.push(event);
          if (event.type === 'prototype-done') release();
        },
      });
      const again = await exportAccount({
        out: join(dir, 'fast.zip'),
        baseUrl: slow.baseUrl,
        keys: [slow.keys.readOnly],
        concurrency: 4,
      });
      expect([first.complete, again.complete]).toEqual([true, true]);
    } finally {
      await slow.close();
    }
    const css = late.findIndex((e) => e.type === 'response' && e.source === STATIC_PATHS.css);
    expect(late.findIndex((e) => e.type === 'prototype-done')).toBeLessThan(css);
    await expectSameArchive(join(dir, 'slow.zip'), join(dir, 'fast.zip'));
  });

  it('keeps the raw XHTML byte for byte and writes a viewable copy beside it', async () => {
    const pages = allFileEntries(manifest).filter((f) => /\/pages\/page\d+\.html$/.test(f.path));
    expect(pages.length).toBe(16);
    for (const page of pages) {
      const served = await fetch(`${service.baseUrl}${page.source}?api_key=${service.keys.readOnly}`);
      expect(entries.get(page.path)?.data.equals(Buffer.from(await served.arrayBuffer())), page.path).toBe(true);
      const view = allFileEntries(manifest).find((f) => f.path === page.path.replace(/\.html$/, '.view.html'));
      expect(view, page.path).toMatchObject({ source: 'generated', generatedFrom: page.path });
    }
  });

  it('makes viewable copies that reference only files inside the archive', () => {
    const views = allFileEntries(manifest).filter((f) => f.path.endsWith('.view.html') || f.path.endsWith('.view.css'));
    expect(views.length).toBeGreaterThan(16);
    for (const view of views) {
      const body = entries.get(view.path)?.data.toString('latin1') ?? '';
      const refs = view.path.endsWith('.css') ? scanCss(body) : scanHtml(body);
      expect(refs.length, view.path).toBeGreaterThan(0);
      for (const ref of refs) {
        if (ref.value === 'data:,') continue;
        expect(ref.value, view.path).not.toMatch(/^[a-z]+:|^\/|^\/\//i);
        const target = new URL(ref.value, `file:///archive/${view.path}`).pathname.slice('/archive/'.length);
        expect(entries.has(target), `${view.path} -> ${ref.value}`).toBe(true);
      }
    }
  });

  it('lists references to other hosts and leaves them out of the viewable copies', () => {
    expect(manifest.foreignReferences?.map((r) => r.url)).toEqual(['https://fonts.example.com/x.css']);
    expect(manifest.foreignReferences?.[0]?.referencedBy).toContain('prototypes/3/r6/pages/page0001.html');
    expect(text('prototypes/3/r6/pages/page0001.html')).toContain('https://fonts.example.com/x.css');
    expect(text('prototypes/3/r6/pages/page0001.view.html')).not.toContain('fonts.example.com');
  });

  it('writes an index.html and a page per prototype, all escaping every name', () => {
    const index = text('index.html');
    const ids = Object.keys(manifest.prototypes);
    const overviews = ids.map((id) => text(`overview/prototype-${id}.html`));
    const all = [index, ...overviews].join('\n');
    expect(all).toContain(`&lt;b&gt;Checkout&lt;/b&gt; &amp; "Pay" 'now'`);
    expect(index).toContain('Shop 🛒 &lt;i&gt;beta&lt;/i&gt; &amp; "friends" – 日本語');
    expect(all).toContain('Use &lt;strong&gt; &amp; "quotes"');
    expect(all).toContain('Jürgen 🐇');
    for (const raw of ['<b>Checkout', '<i>beta', '<v3>', '<strong> &', '<nav> &']) expect(all).not.toContain(raw);
    for (const [n, id] of ids.entries()) {
      expect(index).toContain(`id="prototype-${id}"`);
      expect(index).toContain(`href="overview/prototype-${id}.html"`);
      expect(overviews[n]).toContain(`id="prototype-${id}"`);
    }
    // The one script is the search box's, from its file in the archive: nothing inline.
    const scripts = all.match(/<script[^>]*>[^<]*<\/script>/gi) ?? [];
    expect(scripts).toHaveLength(1 + ids.length);
    for (const script of scripts)
      expect(script).toMatch(
        /^<script src="(\.\.\/)?search\/search-box\.js" data-root="(\.\.\/)?"( data-prototype="\d+")? data-parts="search\/index\.js" data-part-prefix="search\/prototype-" data-part-suffix="\.js"><\/script>$/,
      );
    expect(all.match(/<script/gi)).toHaveLength(scripts.length);
  });

  it('lists every generated entry, so the archive verifies and matches the schema', async () => {
    assertValidManifest(manifest);
    expect(manifest.files.find((f) => f.path === 'index.html')).toMatchObject({
      source: 'generated',
      generatedFrom: 'manifest.json',
    });
    const report = await verifyArchive(out);
    expect(report.problems).toEqual([]);
  });
});

describe('rabbit-export view', () => {
  it('serves the archive from the zip, with types, and nothing outside it', async () => {
    const server = await serveArchive(out);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/);
      const root = await fetch(server.url);
      expect(root.status).toBe(200);
      expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await root.text()).toBe(text('index.html'));
      const asset = manifest.files.find((f) => f.path.endsWith('.png') && f.path.startsWith('assets/'));
      const png = await fetch(`${server.url}${asset?.path ?? ''}`);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect(sha256(Buffer.from(await png.arrayBuffer()))).toBe(asset?.sha256);
      for (const bad of ['..%2F..%2Fetc%2Fpasswd', 'assets%2F..%2Fmanifest.json', 'nope.html', '%00', '%E0%A4%A']) {
        const response = await fetch(`${server.url}${bad}`);
        expect(response.status, bad).toBe(404);
        await response.arrayBuffer();
      }
    } finally {
      await server.close();
    }
  });
  it('renders index.html and every overview page itself, the same bytes the export wrote', async () => {
    const server = await serveArchive(out);
    try {
      const pages = [...entries.keys()].filter((name) => name === 'index.html' || name.startsWith('overview/'));
      expect(pages.length).toBe(Object.keys(manifest.prototypes).length + 1);
      for (const name of pages) {
        const answer = await fetch(server.url + name);
        expect(answer.status, name).toBe(200);
        expect(answer.headers.get('content-security-policy'), name).toMatch(/sandbox allow-scripts allow-same-origin$/);
        expect(await answer.text(), name).toBe(text(name));
      }
    } finally {
      await server.close();
    }
  });
  it('renders them from the manifest heard at start and the zip, filing nothing on disk', async () => {
    // The catalog other readers file on disk (a temp folder, every entry written out again) made
    // view start seconds slower on a million entries than its digests alone; view needs none of it.
    const temp = await mkdtemp(join(dir, 'tmp-'));
    const before = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    try {
      const server = await serveArchive(out);
      try {
        const overview = [...entries.keys()].find((name) => name.startsWith('overview/')) as string;
        for (const name of ['index.html', overview]) expect((await fetch(server.url + name)).status, name).toBe(200);
        expect(await readdir(temp)).toEqual([]);
      } finally {
        await server.close();
      }
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });
  it('lists the pages a prototype holds, in id order, when its pages.json cannot be read', async () => {
    const [id] = Object.keys(manifest.prototypes);
    const revision = manifest.prototypes[id as string]?.revision as number;
    const pagesJson = `prototypes/${id}/r${revision}/pages.json`;
    expect(entries.has(pagesJson)).toBe(true);
    const damaged = join(dir, 'no-page-order.zip');
    await writeZip(
      [...entries].map(([name, { data }]) => ({
        name,
        data: name === pagesJson ? Buffer.from('[') : data,
        store: false,
      })),
      damaged,
    );
    const server = await serveArchive(damaged);
    try {
      const name = `overview/prototype-${id}.html`;
      const answer = await fetch(server.url + name);
      expect(answer.status).toBe(200);
      const pageIds = (html: string) => [...html.matchAll(/id="page-([^"]+)"/g)].map((m) => m[1] as string);
      const written = pageIds(text(name));
      expect(written.length).toBeGreaterThan(1);
      const listed = pageIds(await answer.text());
      expect(listed).toEqual([...written].sort(compareIds));
    } finally {
      await server.close();
    }
  });
});

describe('entryNameOf', () => {
  it.each([
    ['/', 'index.html'],
    ['/index.html?x=1#y', 'index.html'],
    ['/assets/ab.png', 'assets/ab.png'],
    ['/../etc/passwd', undefined],
    ['/%2e%2e/etc/passwd', undefined],
    ['/assets/..%2fmanifest.json', undefined],
    ['/a%5Cb', undefined],
    ['//etc/passwd', undefined],
    ['/.hidden', undefined],
    ['/%ZZ', undefined],
    ['relative', undefined],
  ])('%s names %s', (url, name) => {
    expect(entryNameOf(url)).toBe(name);
  });
});
