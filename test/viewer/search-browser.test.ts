import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { launchChromium, type BrowserContext, type Page } from '../browser/index.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { PAGE, searchArchives } from '../search/search-archive-fixture.js';
import { until } from '../helpers/until.js';

/**
 * The search box of the offline viewer in Chromium: from the unzipped files (file://, the index
 * parts loaded as scripts) and under `view` (its /_search endpoint). A hit leads to the page view
 * with the element outlined by the view's own CSS (:target), since no script runs there.
 */
requireTool(CHROMIUM);
const run = promisify(execFile);

describe('search box in Chromium', () => {
  let browser: BrowserContext | undefined;
  let dir: string;
  let root: string;
  let archive: string;
  let page: Page;
  const requests: string[] = [];
  const refused: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-search-browser-'));
    ({ archive } = await searchArchives(dir));
    root = join(dir, 'unzipped');
    await run('unzip', ['-q', archive, '-d', root]);
    browser = await launchChromium(CHROMIUM, { viewport: { width: 1200, height: 900 } });
    page = await browser.newPage();
    page.on('request', (request) => requests.push(request.url()));
    // A script or request the pages' policy refused shows as a console error.
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const insideArchive = (url: string): boolean =>
    url.startsWith('file://') &&
    resolve(fileURLToPath(url.split(/[?#]/)[0] as string)).startsWith(`${resolve(root)}${sep}`);

  const hits = () => page.locator('#search-hits li.hit');

  /** Follows the first hit and reads how the view marks its target. */
  const followFirst = async (): Promise<{ url: string; target: string | null; outline: string }> => {
    await hits().first().locator('a').click();
    await page.waitForLoadState('load');
    return {
      url: page.url(),
      target: await page.evaluate<string | null>("document.querySelector(':target')?.id ?? null"),
      outline: await page.evaluate<string>(
        "(() => { const s = getComputedStyle(document.querySelector(':target')); return s.outlineStyle + ' ' + s.outlineWidth; })()",
      ),
    };
  };

  it('finds a label as it is typed from file://, and leads to the page view with the element outlined', async () => {
    await page.goto(pathToFileURL(join(root, 'index.html')).href);
    await page.locator('#search-q').pressSequentially('EINLOS');
    // The box searches as each letter comes: 'EIN' has its one hit too, so the hits are read once
    // those of the whole word are shown, not at the first single hit.
    const hit = hits().first();
    await until(async () => (await hit.locator('mark').innerText()) === 'einlös', {
      what: 'the hit of the whole word',
    });
    await expect(hits().count()).resolves.toBe(1);
    await expect(hit.locator('a').innerText()).resolves.toContain('Start – Übersicht 🏠');
    // The query went into the address, so the search can be bookmarked.
    expect(new URL(page.url()).searchParams.get('q')).toBe('EINLOS');
    const shown = await followFirst();
    expect(shown.url).toMatch(new RegExp(`/pages/${PAGE}\\.view\\.html#element\\d+$`));
    expect(shown.target).toBe(new URL(shown.url).hash.slice(1));
    expect(shown.outline).toBe('solid 3px');
    expect(requests.filter((url) => !insideArchive(url))).toEqual([]);
    expect(refused).toEqual([]);
  });

  it('runs the query of index.html?q= on opening, and an overview page keeps to its prototype', async () => {
    await page.goto(`${pathToFileURL(join(root, 'index.html')).href}?q=${encodeURIComponent('支払')}`);
    await expect(page.locator('#search-q').inputValue()).resolves.toBe('支払');
    await until(async () => (await hits().count()) === 1, { what: 'one hit' });
    await expect(hits().first().locator('mark').innerText()).resolves.toBe('支払');
    const before = requests.length;
    await page.goto(`${pathToFileURL(join(root, 'overview', 'prototype-17.html')).href}?q=e`);
    await until(async () => (await hits().count()) > 0, { what: 'hits' });
    const where = await hits().locator('a').allInnerTexts();
    for (const text of where) expect(text).toMatch(/^Shop 🛒/);
    // Only this prototype's part of the index was loaded.
    const parts = requests
      .slice(before)
      .filter((url) => /\/search\/prototype-\d+\.js$/.test(url))
      .map((url) => url.split('/').pop());
    expect(parts).toEqual(['prototype-17.js']);
    expect(refused).toEqual([]);
  });

  it('loads no index part outside the archive, whatever its list of parts names', async () => {
    const copy = join(dir, 'tampered');
    await cp(root, copy, { recursive: true });
    await writeFile(
      join(copy, 'search', 'index.js'),
      'rabbitSearchParts(["../../../outside", "1/../../../x", "17"]);\n',
    );
    const before = requests.length;
    await page.goto(`${pathToFileURL(join(copy, 'index.html')).href}?q=shop`);
    await until(async () => (await hits().count()) === 1, { what: 'one hit' });
    const loaded = requests.slice(before).map((url) => resolve(fileURLToPath(url.split(/[?#]/)[0] as string)));
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((path) => !path.startsWith(`${resolve(copy)}${sep}`))).toEqual([]);
  });

  it('shows a part the list of parts names many times once', async () => {
    const copy = join(dir, 'repeated');
    await cp(root, copy, { recursive: true });
    await writeFile(join(copy, 'search', 'index.js'), 'rabbitSearchParts(["17", "17", "17", "17"]);\n');
    await page.goto(`${pathToFileURL(join(copy, 'index.html')).href}?q=shop`);
    // The status is written once the whole list has been searched.
    await until(async () => /hits?$/.test(await page.locator('#search-status').innerText()), { what: 'the status' });
    await expect(page.locator('#search-status').innerText()).resolves.toBe('1 hit');
    await expect(hits().count()).resolves.toBe(1);
  });

  it('searches under view through /_search, for the box on any page, and marks the element there too', async () => {
    let server: ArchiveServer | undefined;
    const seen: string[] = [];
    const listen = (request: { url(): string }): number => seen.push(request.url());
    page.on('request', listen);
    try {
      server = await serveArchive(archive);
      await page.goto(`${server.url}?q=${encodeURIComponent('ΚΑΛΑΘΙ')}`);
      await until(async () => (await hits().count()) === 1, { what: 'one hit' });
      await expect(hits().first().locator('mark').innerText()).resolves.toBe('Καλάθι');
      expect(seen.some((url) => url.startsWith(`${server?.url}_search?q=`))).toBe(true);
      // No index part is loaded under view: the server searches.
      expect(seen.filter((url) => /\/search\/prototype-/.test(url))).toEqual([]);
      const shown = await followFirst();
      expect(shown.url).toMatch(
        new RegExp(`^${server.url}prototypes/3/r\\d+/pages/${PAGE}\\.view\\.html#element\\d+$`),
      );
      expect(shown.outline).toBe('solid 3px');
      await page.goto(server.url);
      await page.locator('#search-q').pressSequentially('uber');
      await until(async () => (await hits().count()) === 1, { what: 'one hit' });
      expect(seen.every((url) => url.startsWith(server?.url ?? '-'))).toBe(true);
      expect(refused).toEqual([]);
    } finally {
      page.off('request', listen);
      await server?.close();
    }
  });
});
