import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from '../browser/index.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { readArchive } from '../helpers/archive.js';
import { visitEach } from '../helpers/visit-each.js';
import { closeAll, openUnzipped, PAGE_RENDERING } from '../viewer/hostile-front.js';

/**
 * An attack through the stylesheets a page links: a front before the fake service answers page
 * renderings with the variants (one per page, in turn) and serves the sheets and a PNG; the account
 * is exported, unzipped and every view opened from file:// in Chromium, which must load nothing
 * outside the extraction (an `outside.png` waits beside it).
 */
export interface SheetAttack {
  /** Names the work folder. */
  name: string;
  sheets: ReadonlyMap<string, Buffer>;
  variants: readonly Variant[];
}

export interface Variant {
  name: string;
  body: string;
}

const SETTLE_MS = 300;

export function describeSheetAttack(title: string, attack: SheetAttack): void {
  let front: Server | undefined;
  let service: FakeService;
  let dir: string;
  let root: string;
  let browser: BrowserContext | undefined;
  const variantOfView = new Map<string, string>();

  /** The front: page renderings answered with the variants, the sheets and a PNG served, the rest passed to the service. */
  function startFront(pageFor: (path: string) => string): Promise<number> {
    front = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://front').pathname;
      const own = (type: string, bytes: Buffer): void => {
        res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
      };
      const sheet = attack.sheets.get(path);
      if (sheet !== undefined) return own('text/css', sheet);
      if (path === '/static/a.png') return own('image/png', Buffer.from('89504e470d0a1a0a', 'hex'));
      const upstream = request(
        `${service.baseUrl}${req.url ?? '/'}`,
        { method: req.method, headers: { ...req.headers, host: new URL(service.baseUrl).host } },
        (answer) => {
          if (PAGE_RENDERING.test(path) && answer.statusCode === 200) {
            answer.resume();
            return own('text/html; charset=utf-8', Buffer.from(pageFor(path), 'utf8'));
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    return new Promise((done) => front?.listen(0, '127.0.0.1', () => done((front?.address() as AddressInfo).port)));
  }

  beforeAll(async () => {
    const pages = new Map<string, Variant>();
    const port = await startFront((path) => {
      let variant = pages.get(path);
      if (variant === undefined) {
        variant = attack.variants[pages.size % attack.variants.length] as Variant;
        pages.set(path, variant);
      }
      return `<html><head><title>t</title></head><body data-variant="${variant.name}">${variant.body}</body></html>`;
    });
    const origin = `http://127.0.0.1:${port}`;
    service = await startFakeService({ seed: 1, advertisedBaseUrl: origin });
    dir = await mkdtemp(join(tmpdir(), `rabbit-${attack.name}-`));
    const out = join(dir, 'hostile.zip');
    const result = await exportAccount({ out, baseUrl: origin, keys: [service.keys.readOnly] });
    expect(result.complete).toBe(true);
    const { manifest } = await readArchive(out);
    for (const file of manifest.files.concat(
      Object.values(manifest.prototypes).flatMap((p) => Object.values(p.revisions).flatMap((r) => r.files)),
    )) {
      const variant = pages.get(file.source.split('?')[0] as string);
      if (variant !== undefined && file.path.endsWith('.html'))
        variantOfView.set(file.path.replace(/\.html$/, '.view.html'), variant.name);
    }
    ({ root, browser } = await openUnzipped(out, dir));
    await writeFile(join(dir, 'outside.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
  }, 120_000);

  afterAll(async () => {
    await closeAll(browser);
    await new Promise<void>((done) => (front ? front.close(() => done()) : done()));
    await service?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A file:// URL of a file inside the extracted archive, or a data: URL. */
  function insideArchive(url: string): boolean {
    if (url.startsWith('data:')) return true;
    const parsed = new URL(url);
    if (parsed.protocol !== 'file:' || parsed.host !== '') return false;
    return resolve(fileURLToPath(`file://${parsed.pathname}`)).startsWith(`${resolve(root)}${sep}`);
  }

  describe(title, () => {
    it('were exported as views of every variant', () => {
      expect([...new Set(variantOfView.values())].sort()).toEqual(attack.variants.map((v) => v.name).sort());
    });

    it('opening a view loads nothing outside the extraction', async () => {
      const seen = await visitEach(
        browser as BrowserContext,
        [...variantOfView].sort(),
        async ([view, variant], tab) => {
          await tab.page.goto(pathToFileURL(join(root, view)).href, { waitUntil: 'load' });
          await tab.page.waitForTimeout(SETTLE_MS);
          return { variant, outside: tab.requests.filter((url) => !insideArchive(url)) };
        },
      );
      expect(seen).toEqual([...variantOfView].sort().map(([, variant]) => ({ variant, outside: [] })));
    });
  });
}
