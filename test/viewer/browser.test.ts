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

  /** Opens the top page and follows its link to each prototype's page, in order. */
  const prototypePages = async (): Promise<string[]> => {
    await page.goto(pathToFileURL(join(root, 'index.html')).href);
    return entryLinks();
  };

  it('shows every prototype and page from file://, loading only files of the archive', async () => {
    await page.goto(pathToFileURL(join(root, 'index.html')).href);
    const entries = await page.locator('li.entry').evaluateAll((items) => items.map((item) => item.id));
    expect(entries).toEqual(['prototype-3', 'prototype-17', 'prototype-42', 'prototype-1001', 'prototype-1002']);
    expect(await page.locator('b').count()).toBe(0);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'index.png') });
    const sections: string[] = [];
    const thumbnails: { src: string | null; width: number }[] = [];
    let markers = 0;
    for (const link of await entryLinks()) {
      await page.goto(link);
      sections.push(...(await page.locator('section.prototype').evaluateAll((all) => all.map((s) => s.id))));
      thumbnails.push(
        ...(await page
          .locator('figure.page img')
          .evaluateAll((images) =>
            images.map((img) => ({ src: img.getAttribute('src'), width: (img as unknown as Shown).naturalWidth })),
          )),
      );
      markers += await page.locator('.marker').count();
      // Names are shown as text, never as markup.
      expect(await page.locator('b').count(), link).toBe(0);
      // Prototype 3's checkout page names itself in markup characters, shown as they are.
      const prototype3 = link.endsWith('prototype-3.html');
      expect(await page.locator('#page-page7830 figcaption a').allInnerTexts(), link).toEqual(
        prototype3 ? [`<b>Checkout</b> & "Pay" 'now'`] : [],
      );
      if (prototype3) await page.screenshot({ path: join(SCREENSHOTS, 'prototype.png') });
    }
    expect(sections).toEqual(entries);
    expect(thumbnails.length).toBe(16);
    for (const thumbnail of thumbnails) expect(thumbnail.width, thumbnail.src ?? '').toBeGreaterThan(0);
    expect(markers).toBeGreaterThanOrEqual(4);
    expect(requests.filter((url) => !insideArchive(url))).toEqual([]);
  });

  it('opens every page view with all of its images, still without leaving the archive', async () => {
    const links: string[] = [];
    for (const prototype of await prototypePages()) {
      await page.goto(prototype);
      links.push(
        ...(await page
          .locator('figure.page > a')
          .evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href))),
      );
    }
    expect(links.length).toBe(16);
    for (const link of links) {
      expect(link).toMatch(/\.view\.html$/);
      await page.goto(link);
      const images = await page
        .locator('img')
        .evaluateAll((all) => all.map((img) => (img as unknown as Shown).naturalWidth));
      expect(images.length, link).toBeGreaterThanOrEqual(2);
      for (const width of images) expect(width, link).toBeGreaterThan(0);
      // The archived stylesheet applied: its background image and the page box are there.
      const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundImage');
      expect(background, link).toMatch(/^url\("file:/);
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('.page')).position"), link).toBe(
        'relative',
      );
    }
    await page.goto(links[0] as string);
    await page.screenshot({ path: join(SCREENSHOTS, 'page-view.png') });
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
      for (const view of views) {
        await page.goto(view);
        const images = await page
          .locator('img')
          .evaluateAll((all) => all.map((img) => (img as unknown as Shown).naturalWidth));
        expect(images.length, view).toBeGreaterThanOrEqual(2);
        for (const width of images) expect(width, view).toBeGreaterThan(0);
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundImage');
        expect(background, view).toMatch(new RegExp(`^url\\("${server.url}`));
      }
      expect(seen.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:'))).toEqual([]);
    } finally {
      page.off('request', listen);
      await server.close();
    }
  });
});
