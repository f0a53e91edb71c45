import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from '../browser/index.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { readArchive } from '../helpers/archive.js';
import { visitEach } from '../helpers/visit-each.js';
import { closeAll, openUnzipped, startHostileFront, startListener, type Listening } from './hostile-front.js';

/**
 * Page renderings whose `<style>` hides its own end tag in a CSS escape inside a `data:` URL
 * (`url("data:image/png,\3c/style\3e")`). Cleaning the CSS decodes the escape; if the URL is
 * written back as decoded, the view holds a literal `</style>` and what follows it is markup that
 * neither the sanitizer nor the reference rewriting ever read: a full-page link to the raw
 * rendering (whose script then runs from file:// at the first click), an `@import` of a file
 * outside the extracted archive, `//host` references that file:// turns into `file://host/...`.
 * Beside them, an SVG `<style>` whose text a comment splits: cleaned piece by piece, read whole.
 * Each view is opened from the unzipped archive in Chromium, left alone, then clicked in its
 * middle: no script may run, nothing may be asked for outside the extraction.
 */

/** How long a page is given to act on its own, and after a click. */
const SETTLE_MS = 300;
const TITLE = 'hostile page';
const SHARE = '//attacker.example/share';
/** From a view (`prototypes/N/rM/pages/x.view.html`) to a file beside the extracted folder. */
const OUTSIDE = '../../../../../outside.css';

/** A link over the whole window, written as a browser would serialize it (so a re-parse keeps it). */
const fullPageLink = (href: string): string =>
  `<a href="${href}" style="position:fixed;top:0;left:0;width:100%;height:100%;display:block;z-index:9">raw</a>`;

interface Variant {
  name: string;
  /** The hostile `<head>` and `<body>` content, given the page's own name (its raw file is `${name}.html` beside the view). */
  head?(name: string): string;
  body(name: string): string;
}

/** `<style>` text: a rule whose data: URL ends the element, then `tail` as markup, then a new `<style>` for the rest. */
const breakout = (property: string, escaped: string, tail: string): string =>
  `<style>.x{${property}:url("data:image/png,${escaped}")${property === 'cursor' ? ',auto' : ''}}${tail}<style></style>`;

/** The same with the smuggled markup inside the data: URL itself, every `<` and `>` written as a CSS escape. */
const smuggled = (markup: string): string =>
  `<style>.x{background:url("data:image/png,${`</style>${markup}<style>`.replace(/</g, '\\3c ').replace(/>/g, '\\3e ')}")}</style>`;

const VARIANTS: Variant[] = [
  { name: 'escape-3c-link', body: (n) => breakout('background', '\\3c/style\\3e', fullPageLink(`${n}.html`)) },
  {
    name: 'upper-hex-space-link',
    body: (n) => breakout('background-image', '\\3C /style\\3E ', fullPageLink(`${n}.html`)),
  },
  {
    name: 'six-digit-escape-link',
    body: (n) => breakout('background', '\\00003c/style\\00003e', fullPageLink(`${n}.html`)),
  },
  { name: 'cursor-url-link', body: (n) => breakout('cursor', '\\3c/style\\3e', fullPageLink(`${n}.html`)) },
  { name: 'import-outside', body: () => smuggled(`<style>@import url(${OUTSIDE});</style>`) },
  {
    name: 'host-references',
    body: () =>
      smuggled(`<style>@import url(${SHARE}/i.css);.y{background:url(${SHARE}/b.png)}</style>`) +
      breakout('background', '\\3c/style\\3e', `<img src="${SHARE}/i.png"><div class="y">y</div>`),
  },
  { name: 'head-style-import', head: () => smuggled(`<style>@import url(${OUTSIDE});</style>`), body: () => 'text' },
  {
    // Not an escape: an SVG <style>'s text split by a comment, cleaned piece by piece, read whole by the browser.
    name: 'svg-style-split-import',
    body: () => `<svg><style>@import <!---->"${SHARE}/split.css";</style></svg>`,
  },
  {
    name: 'upper-tag-name',
    body: (n) => breakout('background', '\\3C /STYLE\\3E ', fullPageLink(`${n}.html`)),
  },
];

const heard: string[] = [];
let listener: Listening;
let front: Listening | undefined;
let service: FakeService;
let dir: string;
let root: string;
let browser: BrowserContext | undefined;
/** View entry -> the variant its page was served as. */
const variantOfView = new Map<string, string>();

beforeAll(async () => {
  listener = await startListener(heard);
  const listenerOrigin = listener.origin;
  const pages = new Map<string, { variant: string; html: string }>();
  front = await startHostileFront({
    upstream: () => service.baseUrl,
    pageFor: (path) => {
      let served = pages.get(path);
      if (served === undefined) {
        const variant = VARIANTS[pages.size % VARIANTS.length] as Variant;
        const name = (path.split('/').at(-1) as string).replace(/\.html$/, '');
        // The raw rendering acts as soon as it is opened: a click that reaches it shows in its title and at the listener.
        const html =
          `<html><head><title>${TITLE}</title><script>document.title='pwned';location.href='${listenerOrigin}/raw/${variant.name}'</script>` +
          `${variant.head?.(name) ?? ''}</head><body data-variant="${variant.name}">${variant.body(name)}</body></html>`;
        served = { variant: variant.name, html };
        pages.set(path, served);
      }
      return served.html;
    },
  });
  service = await startFakeService({ seed: 1, advertisedBaseUrl: front.origin });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-style-breakout-'));
  const out = join(dir, 'hostile.zip');
  const result = await exportAccount({ out, baseUrl: front.origin, keys: [service.keys.readOnly] });
  expect(result.complete).toBe(true);
  const { manifest } = await readArchive(out);
  for (const file of manifest.files.concat(
    Object.values(manifest.prototypes).flatMap((p) => Object.values(p.revisions).flatMap((r) => r.files)),
  )) {
    const served = pages.get(file.source.split('?')[0] as string);
    if (served !== undefined && file.path.endsWith('.html'))
      variantOfView.set(file.path.replace(/\.html$/, '.view.html'), served.variant);
  }
  ({ root, browser } = await openUnzipped(out, dir));
  // The file an escaped @import aims at, there to be loaded: beside the extraction, not in it.
  await writeFile(join(dir, 'outside.css'), 'body{outline:5px solid red}');
});

afterAll(async () => {
  await closeAll(browser, listener, front, service);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A file:// URL of a file inside the extracted archive (no host: `file://host/` is a network share), or a data: URL. */
function insideArchive(url: string): boolean {
  if (url.startsWith('data:')) return true;
  const parsed = new URL(url);
  if (parsed.protocol !== 'file:' || parsed.host !== '') return false;
  return resolve(fileURLToPath(`file://${parsed.pathname}`)).startsWith(`${resolve(root)}${sep}`);
}

/**
 * Each view visited once for both tests: opened and left alone for SETTLE_MS (what it asked for
 * outside the extraction by then is what the first test judges), then clicked in its middle and
 * given SETTLE_MS again (where the reader is, and whether a script ran, is what the second judges).
 * Two tests visiting every view each waited out the same first settle twice.
 */
let visited: Promise<{ variant: string; outside: string[]; title: boolean; at: string }[]> | undefined;

function visitAll(): NonNullable<typeof visited> {
  visited ??= visitEach(browser as BrowserContext, [...variantOfView].sort(), async ([view, variant], tab) => {
    const size = tab.page.viewportSize() ?? { width: 800, height: 600 };
    const url = pathToFileURL(join(root, view)).href;
    await tab.page.goto(url, { waitUntil: 'load' });
    await tab.page.waitForTimeout(SETTLE_MS);
    const outside = tab.requests.filter((request) => !insideArchive(request));
    const before = await tab.page.title();
    await tab.page.mouse.click(size.width / 2, size.height / 2);
    await tab.page.waitForTimeout(SETTLE_MS);
    const at = tab.page.url().split(/[?#]/)[0] as string;
    return {
      variant,
      outside,
      title: (await tab.page.title()) === before && before !== 'pwned',
      at: at === url ? 'the view' : at,
    };
  });
  return visited;
}

describe('a <style> that hides its end tag in a CSS escape, viewed from file://', () => {
  it('was exported as a view of every variant', () => {
    expect([...new Set(variantOfView.values())].sort()).toEqual(VARIANTS.map((v) => v.name).sort());
  });

  it('opening a view loads nothing outside the extraction: no file beside it, no file://host', async () => {
    const seen = await visitAll();
    expect(seen.map(({ variant, outside }) => ({ variant, outside }))).toEqual(
      [...variantOfView].sort().map(([, variant]) => ({ variant, outside: [] })),
    );
    expect(heard).toEqual([]);
  });

  it('a click anywhere runs no script and leaves the reader on the view', async () => {
    const seen = await visitAll();
    expect(seen.map(({ variant, title, at }) => ({ variant, title, at }))).toEqual(
      [...variantOfView].sort().map(([, variant]) => ({ variant, title: true, at: 'the view' })),
    );
    expect(heard).toEqual([]);
  });
});
