import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { type BrowserContext, type Page, launchChromium } from '../browser/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { serveArchive } from '../../src/viewer/serve-archive.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';

/**
 * The offline viewer in a real browser (Debian's Chromium): the unzipped archive is opened from
 * file:// with no server at all, and every request the browser makes must stay inside it.
 */
// The screenshots in docs/viewing.md are refreshed with UPDATE_SCREENSHOTS=1 npm test; ordinary runs write
// theirs to test-output/ so that running the tests does not change tracked files.
const SCREENSHOTS = fileURLToPath(
  new URL(
    process.env['UPDATE_SCREENSHOTS'] ? '../../docs/screenshots/' : '../../test-output/screenshots/',
    import.meta.url,
  ),
);
// A missing browser fails the file, naming the package (never a skip that passes unjudged).
requireTool(CHROMIUM);

const run = promisify(execFile);

/** The one property of an image element read here (tsconfig has no DOM library). */
interface Shown {
  naturalWidth: number;
}

describe('offline viewer in Chromium', () => {
  let browser: BrowserContext | undefined;
  let dir: string;
  let root: string;
  let page: Page;
  const requests: string[] = [];

  beforeAll(async () => {
    const service = await startFakeService({ seed: 1 });
    // Not tempDir(): that one is emptied after each test, and both tests use the same archive.
    dir = await mkdtemp(join(tmpdir(), 'rabbit-browser-'));
    try {
      const result = await exportAccount({
        out: join(dir, 'archive.zip'),
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
      });
      expect(result.complete).toBe(true);
    } finally {
      await service.close();
    }
    root = join(dir, 'unzipped');
    await run('unzip', ['-q', join(dir, 'archive.zip'), '-d', root]);
    // A fresh profile each run: nothing cached or configured from elsewhere.
    browser = await launchChromium(CHROMIUM, {
      viewport: { width: 1200, height: 900 },
    });
    page = await browser.newPage();
    page.on('request', (request) => requests.push(request.url()));
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const insideArchive = (url: string): boolean => {
    if (url.startsWith('data:')) return true;
    if (!url.startsWith('file://')) return false;
    return resolve(fileURLToPath(url.split('#')[0] as string)).startsWith(`${resolve(root)}${sep}`);
  };

  /** The links of the top page, open in `page`, to each prototype's page, in order. */
  const entryLinks = (): Promise<string[]> =>
    page.locator('li.entry > a').evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href));

  /** The links of the page open in `tab` to each page view, in order. */
  const viewLinks = (tab: Page): Promise<string[]> =>
    tab
      .locator('figure.page > a')
      .evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href));

  /**
   * Opens a page view and reads what the tests judge: every image drawn, the archived stylesheet's
   * background image on the body, the page box it positions.
   */
  const readView = async (link: string, tab: Page): Promise<{ images: number[]; background: string; box: string }> => {
    await tab.goto(link);
    const images = await tab
      .locator('img')
      .evaluateAll((all) => all.map((img) => (img as unknown as Shown).naturalWidth));
    const background = await tab.evaluate<string>('getComputedStyle(document.body).backgroundImage');
    const box = await tab.evaluate<string>("getComputedStyle(document.querySelector('.page')).position");
    return { images, background, box };
  };

  interface TopWalk {
    entries: string[];
    sections: string[];
    thumbnails: { src: string | null; width: number }[];
    markers: number;
    /** Per prototype page: its `<b>` count and prototype 3's checkout caption as shown. */
    shown: { link: string; bold: number; checkout: string[] }[];
    views: string[];
  }

  /**
   * The top page and every prototype page from file://, opened once in `page` for both tests that
   * judge them (what they show, and the page views they link): each opening costs Chromium a
   * layout of a 1200x900 page, and the second test walked the same pages again for their links.
   */
  let topWalk: Promise<TopWalk> | undefined;
  const walkTop = (): Promise<TopWalk> =>
    (topWalk ??= (async () => {
      await page.goto(pathToFileURL(join(root, 'index.html')).href);
      const entries = await page.locator('li.entry').evaluateAll((items) => items.map((item) => item.id));
      const bold = await page.locator('b').count();
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'index.png') });
      const walk: TopWalk = {
        entries,
        sections: [],
        thumbnails: [],
        markers: 0,
        shown: [{ link: 'index.html', bold, checkout: [] }],
        views: [],
      };
      for (const link of await entryLinks()) {
        await page.goto(link);
        walk.sections.push(...(await page.locator('section.prototype').evaluateAll((all) => all.map((s) => s.id))));
        walk.thumbnails.push(
          ...(await page
            .locator('figure.page img')
            .evaluateAll((images) =>
              images.map((img) => ({ src: img.getAttribute('src'), width: (img as unknown as Shown).naturalWidth })),
            )),
        );
        walk.markers += await page.locator('.marker').count();
        walk.shown.push({
          link,
          bold: await page.locator('b').count(),
          checkout: await page.locator('#page-page7830 figcaption a').allInnerTexts(),
        });
        if (link.endsWith('prototype-3.html')) await page.screenshot({ path: join(SCREENSHOTS, 'prototype.png') });
        walk.views.push(...(await viewLinks(page)));
      }
      return walk;
    })());

  it('shows every prototype and page from file://, loading only files of the archive', async () => {
    const { entries, sections, thumbnails, markers, shown } = await walkTop();
    expect(entries).toEqual(['prototype-3', 'prototype-17', 'prototype-42', 'prototype-1001', 'prototype-1002']);
    for (const { link, bold, checkout } of shown) {
      // Names are shown as text, never as markup.
      expect(bold, link).toBe(0);
      // Prototype 3's checkout page names itself in markup characters, shown as they are.
      expect(checkout, link).toEqual(link.endsWith('prototype-3.html') ? [`<b>Checkout</b> & "Pay" 'now'`] : []);
    }
    expect(shown.length).toBe(entries.length + 1);
    expect(sections).toEqual(entries);
    expect(thumbnails.length).toBe(16);
    for (const thumbnail of thumbnails) expect(thumbnail.width, thumbnail.src ?? '').toBeGreaterThan(0);
    expect(markers).toBeGreaterThanOrEqual(4);
    expect(requests.filter((url) => !insideArchive(url))).toEqual([]);
  });

  it('opens every page view with all of its images, still without leaving the archive', async () => {
    const links = (await walkTop()).views;
    expect(links.length).toBe(16);
    for (const link of links) expect(link).toMatch(/\.view\.html$/);
    const seen = [];
    for (const link of links) {
      seen.push(await readView(link, page));
      // The screenshot of the first view, taken as it is open rather than by opening it again.
      if (link === links[0]) await page.screenshot({ path: join(SCREENSHOTS, 'page-view.png') });
    }
    seen.forEach(({ images, background, box }, index) => {
      const link = links[index] as string;
      expect(images.length, link).toBeGreaterThanOrEqual(2);
      for (const width of images) expect(width, link).toBeGreaterThan(0);
      // The archived stylesheet applied: its background image and the page box are there.
      expect(background, link).toMatch(/^url\("file:/);
      expect(box, link).toBe('relative');
    });
    expect(requests.filter((url) => !insideArchive(url))).toEqual([]);
  });

  it('shows the same under view, whose policy header sandboxes every page: images and stylesheets still load', async () => {
    const server = await serveArchive(join(dir, 'archive.zip'));
    const seen: string[] = [];
    const listen = (request: { url(): string }): number => seen.push(request.url());
    page.on('request', listen);
    try {
      await page.goto(server.url);
      const prototypes = await page
        .locator('li.entry > a')
        .evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href));
      expect(prototypes.length).toBe(5);
      const views: string[] = [];
      for (const prototype of prototypes) {
        await page.goto(prototype);
        for (const width of await page
          .locator('figure.page img')
          .evaluateAll((all) => all.map((img) => (img as unknown as Shown).naturalWidth)))
          expect(width, prototype).toBeGreaterThan(0);
        views.push(
          ...(await page
            .locator('figure.page > a')
            .evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href))),
        );
      }
      expect(views.length).toBe(16);
      const read = [];
      for (const view of views) read.push(await readView(view, page));
      read.forEach(({ images, background }, index) => {
        const view = views[index] as string;
        expect(images.length, view).toBeGreaterThanOrEqual(2);
        for (const width of images) expect(width, view).toBeGreaterThan(0);
        expect(background, view).toMatch(new RegExp(`^url\\("${server.url}`));
      });
      expect(seen.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:'))).toEqual([]);
    } finally {
      page.off('request', listen);
      await server.close();
    }
  });
});
