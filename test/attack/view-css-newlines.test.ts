// Shows: CSS Chromium reads differently from view-css.ts (CR/FF-ended strings, UTF-16 or ISO-2022-JP sheets) and a srcset with nested parentheses make a view load files outside the extraction.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from '../browser/index.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { readArchive } from '../helpers/archive.js';
import { closeAll, openUnzipped, PAGE_RENDERING } from '../viewer/hostile-front.js';

/**
 * Pages and stylesheets that the view's CSS reader (view-css.ts) reads differently from Chromium's
 * CSS tokenizer and srcset parser, exported through the tool and opened from the unzipped archive:
 * every reference a browser takes from them must stay inside the extraction. Each variant names a
 * file beside the extracted folder; a view that asks for it loads from outside the archive.
 */

const SETTLE_MS = 300;
/** From a view (`prototypes/N/rM/pages/x.view.html`) to a file beside the extracted folder. */
const FROM_VIEW = '../../../../../outside.png';
/** From an archived stylesheet (`assets/x.css`) to the same file. */
const FROM_ASSET = '../../outside.png';

const utf16le = (text: string): Buffer => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

/** Stylesheets the front serves, by path: each holds no reference view-css.ts can see, and one Chromium loads. */
const SHEETS: ReadonlyMap<string, Buffer> = new Map([
  // A CR ends a CSS string (CSS preprocessing makes it a newline); view-css.ts's string runs on to the next quote.
  ['/cr-string.css', Buffer.from(`.cr-string{content:"x\r;background:url(${FROM_ASSET}?cr)}"}`, 'latin1')],
  // The same with a form feed.
  ['/ff-string.css', Buffer.from(`.ff-string{content:"x\f;background:url(${FROM_ASSET}?ff)}"}`, 'latin1')],
  // The same in a sheet with a reference of its own: the copy made of it keeps the hidden one, and its check passes it.
  [
    '/cr-copy.css',
    Buffer.from(
      `.cr-copy{border-image:url(/static/a.png)}.cr-copy{content:"x\r;background:url(${FROM_ASSET}?copy)}"}`,
      'latin1',
    ),
  ],
  // An @import so hidden: a stylesheet from outside the archive, which may load anything in turn.
  ['/cr-import.css', Buffer.from(`"x\r{}@import url(${FROM_ASSET}?import);"{}.cr-import{color:red}`, 'latin1')],
  // A UTF-16 byte order mark: Chromium reads the sheet as UTF-16; view-css.ts reads its bytes as latin1.
  ['/utf16.css', utf16le(`.utf16{background:url(${FROM_ASSET}?utf16)}`)],
  // @charset names ISO-2022-JP, whose escape sequence ESC ( B vanishes in decoding: `u ESC(B rl(` is `url(`.
  [
    '/iso2022jp.css',
    Buffer.from(`@charset "iso-2022-jp";.iso2022jp{background:u\x1b(Brl(${FROM_ASSET}?jis)}`, 'latin1'),
  ],
]);

interface Variant {
  name: string;
  body: string;
}

const VARIANTS: Variant[] = [
  ...[...SHEETS.keys()].map((path) => {
    const name = path.slice(1, -'.css'.length);
    return { name: `sheet-${name}`, body: `<link rel="stylesheet" href="${path}"><div class="${name}">${name}</div>` };
  }),
  // A form feed ends the string in a page's own <style>: the declaration after it is read by Chromium alone.
  {
    name: 'style-ff-string',
    body: `<style>.z{content:"a\f;background:url(${FROM_VIEW}?style-ff)}"}</style><div class="z">z</div>`,
  },
  // srcset: view's splitter nests parentheses in a descriptor, the HTML algorithm does not: a second candidate appears.
  { name: 'srcset-nested-parens', body: `<img srcset="/static/a.png 1x((),${FROM_VIEW}?srcset,)">` },
];

let front: Server | undefined;
let service: FakeService;
let dir: string;
let root: string;
let browser: BrowserContext | undefined;
let page: Page;
const requests: string[] = [];
const variantOfView = new Map<string, string>();

/** The front: page renderings answered with the variants, the sheets and a PNG served, the rest passed to the service. */
function startFront(pageFor: (path: string) => string): Promise<number> {
  front = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://front').pathname;
    const own = (type: string, bytes: Buffer): void => {
      res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
    };
    const sheet = SHEETS.get(path);
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
      variant = VARIANTS[pages.size % VARIANTS.length] as Variant;
      pages.set(path, variant);
    }
    return `<html><head><title>t</title></head><body data-variant="${variant.name}">${variant.body}</body></html>`;
  });
  const origin = `http://127.0.0.1:${port}`;
  service = await startFakeService({ seed: 1, advertisedBaseUrl: origin });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-view-css-newlines-'));
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
  ({ root, browser, page } = await openUnzipped(out, dir, requests));
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

describe('CSS and srcset read differently by the view and by Chromium', () => {
  it('were exported as views of every variant', () => {
    expect([...new Set(variantOfView.values())].sort()).toEqual(VARIANTS.map((v) => v.name).sort());
  });

  it('opening a view loads nothing outside the extraction', async () => {
    const seen = [];
    for (const [view, variant] of [...variantOfView].sort()) {
      requests.length = 0;
      await page.goto(pathToFileURL(join(root, view)).href, { waitUntil: 'load' });
      await page.waitForTimeout(SETTLE_MS);
      seen.push({ variant, outside: requests.filter((url) => !insideArchive(url)) });
    }
    expect(seen).toEqual([...variantOfView].sort().map(([, variant]) => ({ variant, outside: [] })));
  });
});
