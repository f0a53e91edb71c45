import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { launchChromium, type BrowserContext, type Page } from '../browser/index.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { PAGE, searchArchives } from '../search/search-archive-fixture.js';
import { until } from '../helpers/until.js';

/**
 * `view` against a page on another port of 127.0.0.1, in Chromium. A browser treats every port of a
 * host as the same site and sends it the host's cookies, so whatever the browser was given by the
 * view and then hands to another port must not open the archive. The other port here is a server
 * that logs every request the browser makes to it, and whose page tries to read the view itself.
 */
requireTool(CHROMIUM);

interface Logged {
  url: string;
  headers: IncomingHttpHeaders;
}

/** What the other port's page could read of the view, each attempt by name. */
type Attempts = Record<string, string>;

function otherPortPage(view: string): string {
  // Reads of the view's root, with the browser's credentials, as any page on the host may try.
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>another port</title></head><body>
<img src="${view}/manifest.json"><img src="${view}/index.html">
<script>
(async function () {
  var view = ${JSON.stringify(view)};
  var attempts = {};
  for (var path of ['/manifest.json', '/index.html', '/_search?q=e']) {
    try {
      var answer = await fetch(view + path, { credentials: 'include' });
      attempts[path] = answer.status + ' ' + (await answer.text()).slice(0, 200);
    } catch (error) {
      attempts[path] = 'failed: ' + String(error);
    }
  }
  await fetch('/report', { method: 'POST', body: JSON.stringify(attempts) });
})();
</script></body></html>`;
}

describe('view and a page on another port of the host', () => {
  let browser: BrowserContext | undefined;
  let dir: string;
  let view: ArchiveServer;
  let other: Server;
  let otherOrigin: string;
  let page: Page;
  const logged: Logged[] = [];
  let report: (attempts: Attempts) => void;
  const reported = new Promise<Attempts>((resolve) => (report = resolve));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-other-port-'));
    const { archive } = await searchArchives(dir);
    view = await serveArchive(archive);
    const viewOrigin = new URL(view.url).origin;
    other = createServer((req, res) => {
      logged.push({ url: req.url ?? '', headers: req.headers });
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.url === '/report') report(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Attempts);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(otherPortPage(viewOrigin));
      });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    browser = await launchChromium(CHROMIUM, { viewport: { width: 1200, height: 900 } });
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await view?.close();
    other?.closeAllConnections();
    await new Promise((resolve) => other?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('works when opened by the address it printed: the overview, a search, the page view it leads to', async () => {
    const answer = await page.goto(view.url);
    expect(answer?.status()).toBe(200);
    await expect(page.locator('li.entry > a').count()).resolves.toBeGreaterThan(0);
    await page.locator('#search-q').pressSequentially('ΚΑΛΑΘΙ');
    await until(async () => (await page.locator('#search-hits li.hit').count()) === 1, { what: 'one hit' });
    await page.locator('#search-hits li.hit a').first().click();
    await page.waitForLoadState('load');
    expect(page.url()).toMatch(new RegExp(`^${view.url}prototypes/3/r\\d+/pages/${PAGE}\\.view\\.html#element\\d+$`));
    const images = await page
      .locator('img')
      .evaluateAll((all) => all.map((img) => (img as unknown as { naturalWidth: number }).naturalWidth));
    for (const width of images) expect(width).toBeGreaterThan(0);
  });

  it('gives the other port nothing that reads the archive', async () => {
    // The browser has been at the view (the test above); now it visits the other port.
    await page.goto(`${otherOrigin}/`);
    const attempts = await reported;
    // Its page's own reads of the view: refused by the browser or by the view.
    for (const [path, result] of Object.entries(attempts)) {
      expect(result, path).not.toContain('"prototypes"');
      expect(result, path).not.toContain('<html');
      expect(result, path).not.toContain('"hit"');
    }
    expect(logged.length).toBeGreaterThan(1);
    const token = new URL(view.url).pathname.slice(1, -1);
    const viewOrigin = new URL(view.url).origin;
    for (const { url, headers } of logged) {
      // The token itself never reaches it: not in a cookie, a Referer, or any other header.
      expect(`${url} ${JSON.stringify(headers)}`).not.toContain(token);
      // And what it was sent, replayed to the view (as curl would), opens nothing.
      const replayed = { ...headers, host: new URL(viewOrigin).host };
      delete replayed['content-length'];
      delete replayed['connection'];
      for (const path of ['/', '/index.html', '/manifest.json', '/_search?q=e']) {
        const response = await request(`${viewOrigin}${path}`, { headers: replayed });
        const body = await response.body.text();
        expect(response.statusCode, `${path} with ${headers.cookie ?? 'no cookie'}`).toBe(403);
        expect(body).not.toContain('"prototypes"');
      }
    }
  });
});
