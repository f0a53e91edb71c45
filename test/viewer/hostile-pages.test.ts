import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from '../browser/index.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { readArchive } from '../helpers/archive.js';
import { visitEach } from '../helpers/visit-each.js';
import { closeAll, openUnzipped, startHostileFront, startListener, type Listening } from './hostile-front.js';

/**
 * Page renderings written to act, exported through the tool and opened in Chromium, from the
 * unzipped files and under `view`. A listener on another origin stands for the rest of the
 * internet: it must hear nothing, and no page may change its own title (what each script does).
 */

/** How long a page is given to act on its own (a refresh, a load handler) after it has loaded. */
const SETTLE_MS = 300;

interface Variant {
  name: string;
  /** The page, given the listener's origin (http://localhost:PORT). */
  html(listener: string): string;
  /** The element a reader would click or submit. */
  click?: string;
}

const TITLE = 'hostile page';
const body = (name: string, inner: string): string => `<body data-variant="${name}">${inner}</body></html>`;
const script = (listener: string, name: string): string =>
  `document.title = 'pwned'; location.href = '${listener}/${name}';`;

const VARIANTS: Variant[] = [
  {
    name: 'script-before-head',
    html: (l) =>
      `<script>${script(l, 'script-before-head')}</script><html><head><title>${TITLE}</title></head>${body('script-before-head', 'text')}`,
  },
  {
    name: 'comment-head',
    html: (l) =>
      `<!-- <head> --><html><head><title>${TITLE}</title><script>${script(l, 'comment-head')}</script></head>${body('comment-head', 'text')}`,
  },
  {
    name: 'meta-refresh',
    html: (l) =>
      `<html><head><title>${TITLE}</title><meta http-equiv="refresh" content="0;url=${l}/meta-refresh"></head>${body('meta-refresh', 'text')}`,
  },
  {
    name: 'img-onerror',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('img-onerror', `<img src="data:," onerror="${script(l, 'img-onerror')}">`)}`,
  },
  {
    name: 'javascript-link',
    click: '#go',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('javascript-link', `<a id="go" href="jav&#x09;ascript:${script(l, 'javascript-link')}">go</a>`)}`,
  },
  {
    name: 'iframe-srcdoc',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('iframe-srcdoc', `<iframe srcdoc="<script>top.document.title='pwned'; top.location.href='${l}/iframe-srcdoc'</script>"></iframe>`)}`,
  },
  {
    name: 'object',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('object', `<object data="${l}/object" type="text/html"></object><embed src="${l}/embed">`)}`,
  },
  {
    name: 'base-href',
    click: '#go',
    html: (l) =>
      `<html><head><base href="${l}/base/"><title>${TITLE}</title></head>${body('base-href', `<a id="go" href="#top">top</a>`)}`,
  },
  {
    name: 'svg-script',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('svg-script', `<svg><script>${script(l, 'svg-script')}</script></svg>`)}`,
  },
  {
    name: 'form-action',
    click: '#go',
    html: (l) =>
      `<html><head><title>${TITLE}</title></head>${body('form-action', `<form action="${l}/form-action" method="get"><input name="q" value="1"><button id="go" type="submit">send</button></form>`)}`,
  },
];

/** Every request the listener on another origin hears. */
const heard: string[] = [];
let listener: Listening;
let front: Listening;
let service: FakeService;
let dir: string;
let root: string;
let out: string;
let browser: BrowserContext | undefined;
let server: ArchiveServer | undefined;
/** Raw rendering entry -> the hostile body the service sent for it. */
const served = new Map<string, string>();

beforeAll(async () => {
  listener = await startListener(heard);
  // A front for the fake service that answers every page rendering with a hostile page instead,
  // each page the next variant, and passes everything else through untouched.
  const pages = new Map<string, string>();
  front = await startHostileFront({
    upstream: () => service.baseUrl,
    pageFor: (path) => {
      let html = pages.get(path);
      if (html === undefined) {
        const variant = VARIANTS[pages.size % VARIANTS.length] as Variant;
        html = variant.html(listener.origin);
        pages.set(path, html);
      }
      return html;
    },
  });
  const frontUrl = front.origin;
  service = await startFakeService({ seed: 1, advertisedBaseUrl: frontUrl });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-hostile-'));
  out = join(dir, 'hostile.zip');
  const result = await exportAccount({ out, baseUrl: frontUrl, keys: [service.keys.readOnly] });
  const { manifest, entries } = await readArchive(out);
  expect(manifest.errors).toEqual([]);
  expect(result.complete).toBe(true);
  for (const file of manifest.files.concat(
    Object.values(manifest.prototypes).flatMap((p) => Object.values(p.revisions).flatMap((r) => r.files)),
  )) {
    const html = pages.get(file.source.split('?')[0] as string);
    if (html !== undefined) served.set(file.path, html);
  }
  // The raw renderings are the record: kept byte for byte, hostile as they came.
  for (const [path, html] of served) expect(entries.get(path)?.data.toString('utf8'), path).toBe(html);
  ({ root, browser } = await openUnzipped(out, dir));
});

afterAll(async () => {
  // A walk that failed is reported by its test; it is over before anything it uses is closed.
  await Promise.allSettled([walked]);
  await closeAll(browser, server, listener, front, service);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Opens one view, lets it act, does what a reader would, and says which variant it was and its title after. */
async function visit(url: string, page: Page): Promise<{ variant: string | null; title: string }> {
  await page.goto(url, { waitUntil: 'load' });
  const variant = await page
    .locator('body')
    .getAttribute('data-variant', { timeout: 10_000 })
    .catch(() => null);
  const click = VARIANTS.find((v) => v.name === variant)?.click;
  await page.waitForTimeout(SETTLE_MS);
  if (click !== undefined) {
    // A mouse click at the element, as a reader's: it waits for no navigation the page may or may not start.
    // The element is there once the page has loaded; the time allowed is for a busy machine only.
    const box = await page.locator(click).boundingBox({ timeout: 10_000 });
    if (box === null) throw new Error(`${click} of ${variant} is not on the page`);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForTimeout(SETTLE_MS);
  }
  return { variant, title: await page.title() };
}

function viewsOf(): string[] {
  return [...served.keys()].map((path) => path.replace(/\.html$/, '.view.html')).sort();
}

/** What one walk of every view saw: each view as visited, the variants met, every URL its tabs asked for. */
interface Walk {
  visits: { url: string; seen: { view: string; variant: string | null; title: string; at: string | undefined } }[];
  variants: string[];
  requests: string[];
}

/** Opens every view at its URL (a few tabs at once), lets it act, and clicks what a reader would. */
async function walk(urlOf: (view: string) => string): Promise<Walk> {
  const requests: string[] = [];
  const visits = await visitEach(browser as BrowserContext, viewsOf(), async (view, tab) => {
    const url = urlOf(view);
    const { variant, title } = await visit(url, tab.page);
    requests.push(...tab.requests);
    return { url, seen: { view, variant, title, at: tab.page.url().split(/[?#]/)[0] } };
  });
  const variants = [...new Set(visits.flatMap(({ seen }) => (seen.variant === null ? [] : [seen.variant])))].sort();
  return { visits, variants, requests };
}

/**
 * Both walks, from file:// and under view, run at once in tabs of their own: each view still gets
 * its full SETTLE_MS (twice when clicked), but the two walks' waits overlap instead of adding up.
 * The listener serves both: each test checks it heard nothing at all.
 */
let walked: Promise<{ file: Walk; view: Walk }> | undefined;

function walks(): NonNullable<typeof walked> {
  walked ??= (async () => {
    server = await serveArchive(out);
    const under = (server as ArchiveServer).url;
    const [file, view] = await Promise.all([
      walk((path) => pathToFileURL(join(root, path)).href),
      walk((path) => `${under}${path}`),
    ]);
    return { file, view };
  })();
  return walked;
}

/** Each view kept its title and stayed where it was opened. */
function expectStayed({ visits }: Walk): void {
  for (const { url, seen } of visits)
    expect(seen).toEqual({ view: seen.view, variant: seen.variant, title: TITLE, at: url });
}

describe('hostile page renderings', () => {
  it('are exported as they came, one page per variant at least', () => {
    expect(served.size).toBeGreaterThanOrEqual(VARIANTS.length);
  });

  it('cannot act from file://: no script runs, nothing reaches another origin, nothing navigates away', async () => {
    const { file } = await walks();
    expectStayed(file);
    expect(file.variants).toEqual(VARIANTS.map((v) => v.name).sort());
    expect(heard).toEqual([]);
    const outside = file.requests.filter(
      (url) =>
        !url.startsWith('data:') &&
        !(
          url.startsWith('file://') &&
          resolve(fileURLToPath(url.split(/[?#]/)[0] as string)).startsWith(`${resolve(root)}${sep}`)
        ),
    );
    expect(outside).toEqual([]);
  });

  it('cannot act under view either', async () => {
    const { view } = await walks();
    const under = (server as ArchiveServer).url;
    expectStayed(view);
    expect(view.variants).toEqual(VARIANTS.map((v) => v.name).sort());
    expect(heard).toEqual([]);
    expect(view.requests.filter((url) => !url.startsWith(under) && !url.startsWith('data:'))).toEqual([]);
  });
});
