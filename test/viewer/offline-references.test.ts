import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from '../browser/index.js';
import { visitEach } from '../helpers/visit-each.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import {
  closeAll,
  openUnzipped,
  PAGE_RENDERING,
  startHostileFront,
  startListener,
  type Listening,
} from './hostile-front.js';

/**
 * Views opened from the unzipped archive (file://, where no header protects anything) whose
 * renderings point, however written, at a raw rendering, an archived SVG, or a `//host` that
 * file:// makes `file://host/...` (an SMB share on Windows). Clicking must lead to a view or
 * nowhere, and opening must make Chromium load nothing but files of the extracted archive.
 */

const run = promisify(execFile);

/** How long a page is given to act on its own, and after a click. */
const SETTLE_MS = 300;
const TITLE = 'hostile page';
const SHARE = '//attacker.example/share';

/** What a page knows to aim at: its own archive paths, the archived SVG, the listener. */
interface Target {
  /** The page's name as served (`page0001`). */
  name: string;
  /** From the view's folder to the raw rendering, by a path the service would resolve elsewhere. */
  rawPage: string;
  /** From the view's folder to the archived SVG. */
  svgAsset: string;
  listener: string;
}

interface Variant {
  name: string;
  html(t: Target): string;
  /** The element a reader clicks. */
  click?: string;
}

const box = 'display:block;width:20px;height:20px';

const VARIANTS: Variant[] = [
  { name: 'percent-escaped-link', click: '#go', html: (t) => `<a id="go" href="${t.name}.%68tml">next page</a>` },
  { name: 'link-to-archived-svg', click: '#go', html: (t) => `<a id="go" href="${t.svgAsset}">picture</a>` },
  { name: 'link-to-raw-page', click: '#go', html: (t) => `<a id="go" href="${t.rawPage}">raw</a>` },
  {
    name: 'svg-link-to-raw-page',
    click: '#go',
    html: (t) =>
      `<svg width="200" height="40"><a id="go" xlink:href="${t.rawPage}"><rect width="200" height="40" fill="blue"/></a></svg>`,
  },
  { name: 'style-file-url', html: () => `<div style="background:url(file:${SHARE}/a.png);${box}">x</div>` },
  {
    name: 'image-set-string',
    html: () => `<div style="background-image:image-set('${SHARE}/is.png' 1x);${box}">x</div>`,
  },
  {
    name: 'webkit-image-set-style',
    html: () => `<style>.w{background:-webkit-image-set("${SHARE}/w.png" 1x);${box}}</style><div class="w">x</div>`,
  },
  { name: 'escaped-url', html: () => `<div style="background:\\75 rl(${SHARE}/esc.png);${box}">x</div>` },
  {
    name: 'svg-feimage',
    html: () =>
      `<svg width="20" height="20"><filter id="f"><feImage href="${SHARE}/fe.png"/></filter><rect filter="url(#f)" width="20" height="20"/></svg>`,
  },
  { name: 'svg-use', html: () => `<svg width="20" height="20"><use href="${SHARE}/u.svg#a"/></svg>` },
  {
    name: 'svg-fill-url',
    html: () => `<svg width="20" height="20"><rect fill="url(${SHARE}/p.svg#p)" width="20" height="20"/></svg>`,
  },
  {
    name: 'img-srcset-poster',
    html: () =>
      `<img src="${SHARE}/i.png" srcset="${SHARE}/1.png 1x, ${SHARE}/2.png 2x"><video poster="${SHARE}/p.png" width="20" height="20"></video>`,
  },
  {
    name: 'data-stylesheet-import',
    html: () => `<link rel="stylesheet" href="data:text/css,@import url(file:${SHARE}/d.css);"><div>x</div>`,
  },
  {
    name: 'escaped-import',
    html: () =>
      `<style>@\\69mport "${SHARE}/i.css"; .c{background:url(${SHARE}/c.png)}</style><div class="c" style="${box}">x</div>`,
  },
  {
    name: 'custom-property-image-set',
    html: () => `<div style="--u:'${SHARE}/v.png';background-image:image-set(var(--u) 1x);${box}">x</div>`,
  },
  { name: 'stylesheet-with-escapes', html: () => `<link rel="stylesheet" href="/evil.css"><div class="e">x</div>` },
];

/** An SVG the pages draw with, so the crawl archives it: opened as a document, it runs its script. */
const svgBody = (listener: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>document.title='pwned';fetch('${listener}/svg')</script><rect width="10" height="10"/></svg>`;
/** A stylesheet whose references the crawl's scanner does not see. */
const CSS_BODY = `.e{background:\\75 rl(${SHARE}/css-esc.png);${box}} body{background-image:image-set("${SHARE}/css-is.png" 1x)}`;

const heard: string[] = [];
let listener: Listening;
let front: Listening | undefined;
let service: FakeService;
let dir: string;
let root: string;
let browser: BrowserContext | undefined;
/** View entry -> the variant its page was served as. */
const variantOfView = new Map<string, string>();
let svgAssetPath: string;

interface ManifestFile {
  path: string;
  source: string;
}

async function manifestFiles(folder: string): Promise<ManifestFile[]> {
  const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as {
    files: ManifestFile[];
    prototypes: Record<string, { revisions: Record<string, { files: ManifestFile[] }> }>;
  };
  return manifest.files.concat(
    Object.values(manifest.prototypes).flatMap((p) => Object.values(p.revisions).flatMap((r) => r.files)),
  );
}

beforeAll(async () => {
  listener = await startListener(heard);
  const listenerOrigin = listener.origin;
  const svg = svgBody(listenerOrigin);
  svgAssetPath = `assets/${createHash('sha256').update(svg).digest('hex')}.svg`;
  service = await startFakeService({ seed: 1 });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-offline-refs-'));
  // A plain export first, to learn where each page lands in the archive.
  await exportAccount({ out: join(dir, 'plain.zip'), baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
  await run('unzip', ['-q', join(dir, 'plain.zip'), 'manifest.json', '-d', join(dir, 'plain')]);
  const pathOf = new Map<string, string>();
  for (const file of await manifestFiles(join(dir, 'plain')))
    if (PAGE_RENDERING.test(file.source.split('?')[0] as string))
      pathOf.set(file.source.split('?')[0] as string, file.path);
  const sources = [...pathOf.keys()].sort();
  const htmlOf = (source: string): string => {
    const path = pathOf.get(source) as string;
    const parts = path.split('/');
    const variant = VARIANTS[sources.indexOf(source) % VARIANTS.length] as Variant;
    variantOfView.set(path.replace(/\.html$/, '.view.html'), variant.name);
    const target: Target = {
      name: (parts.at(-1) as string).replace(/\.html$/, ''),
      rawPage: `../../${parts.slice(2).join('/')}`,
      svgAsset: `${'../'.repeat(parts.length - 1)}${svgAssetPath}`,
      listener: listenerOrigin,
    };
    return (
      `<html><head><title>${TITLE}</title><script>document.title='pwned';fetch('${listenerOrigin}/raw')</script></head>` +
      `<body data-variant="${variant.name}"><img src="/evil.svg" width="10" height="10">${variant.html(target)}</body></html>`
    );
  };
  // A front that answers each page rendering with its variant, serves the SVG and the stylesheet,
  // and passes everything else to the fake service.
  front = await startHostileFront({
    upstream: () => service.baseUrl,
    pageFor: (path) => (pathOf.has(path) ? htmlOf(path) : undefined),
    files: new Map([
      ['/evil.svg', { type: 'image/svg+xml', body: svg }],
      ['/evil.css', { type: 'text/css', body: CSS_BODY }],
    ]),
  });
  const frontUrl = front.origin;
  const out = join(dir, 'hostile.zip');
  const result = await exportAccount({ out, baseUrl: frontUrl, keys: [service.keys.readOnly] });
  expect(result.complete).toBe(true);
  ({ root, browser } = await openUnzipped(out, dir));
});

afterAll(async () => {
  await closeAll(browser, listener, front, service);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A file:// URL of a file inside the extracted archive (no host: `file://host/` is a network share). */
function insideArchive(url: string): boolean {
  if (url.startsWith('data:')) return true;
  const parsed = new URL(url);
  if (parsed.protocol !== 'file:' || parsed.host !== '') return false;
  return resolve(fileURLToPath(`file://${parsed.pathname}`)).startsWith(`${resolve(root)}${sep}`);
}

interface Visit {
  variant: string;
  /** What the view asked for outside the extraction once opened and left alone. */
  outside: string[];
  /** For a variant with a link to click: the title after the click, and where the reader is. */
  clicked?: { title: string; at: string };
}

/**
 * Each view visited once for both tests: opened and left alone for SETTLE_MS (what it asked for
 * outside the extraction by then is what one test judges), then, if its variant has a link, clicked
 * and given SETTLE_MS again (where that leads is what the other judges). Two tests visiting the
 * clicked views each waited out the same first settle twice.
 */
let visited: Promise<Visit[]> | undefined;

function visitAll(): Promise<Visit[]> {
  visited ??= visitEach(browser as BrowserContext, [...variantOfView], async ([view, variant], tab) => {
    const { page } = tab;
    await page.goto(pathToFileURL(join(root, view)).href, { waitUntil: 'load' });
    await page.waitForTimeout(SETTLE_MS);
    const outside = tab.requests.filter((url) => !insideArchive(url));
    const click = VARIANTS.find((v) => v.name === variant)?.click;
    if (click === undefined) return { variant, outside };
    const target = await page.locator(click).boundingBox({ timeout: 10_000 });
    if (target === null) throw new Error(`${click} of ${variant} is not on the page`);
    await page.mouse.click(target.x + target.width / 2, target.y + target.height / 2);
    await page.waitForTimeout(SETTLE_MS);
    const at = page.url().split(/[?#]/)[0] as string;
    return {
      variant,
      outside,
      clicked: { title: await page.title(), at: at.endsWith('.view.html') && insideArchive(at) ? 'a view' : at },
    };
  });
  return visited;
}

describe('views opened from file://', () => {
  it('were made from every variant, and the archived SVG the links aim at is there', async () => {
    expect([...new Set(variantOfView.values())].sort()).toEqual(VARIANTS.map((v) => v.name).sort());
    await expect(access(join(root, svgAssetPath))).resolves.toBeUndefined();
  });

  it('a click leads to a view or nowhere: no raw rendering, no archived SVG, no script', async () => {
    const seen = (await visitAll()).filter(({ clicked }) => clicked !== undefined);
    expect(seen.map(({ variant, clicked }) => ({ variant, ...clicked }))).toEqual(
      [...variantOfView.values()]
        .filter((v) => VARIANTS.find((x) => x.name === v)?.click !== undefined)
        .map((variant) => ({ variant, title: TITLE, at: 'a view' })),
    );
    expect(heard).toEqual([]);
  });

  it('opening one loads nothing but files inside the extracted archive', async () => {
    const seen = await visitAll();
    expect(seen.map(({ variant, outside }) => ({ variant, outside }))).toEqual(
      [...variantOfView.values()].map((variant) => ({ variant, outside: [] })),
    );
    expect(heard).toEqual([]);
  });
});
