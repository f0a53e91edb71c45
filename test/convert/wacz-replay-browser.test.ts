import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, REPLAYWEBPAGE_DIR, type BrowserContext, type Page } from '../browser/index.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportSample } from './helpers.js';
import { requireTool, runTool } from './tools.js';
import { until } from '../helpers/until.js';
import { CHROMIUM, TOOL_PACKAGES } from '../helpers/tools.js';

/**
 * The WACZ replayed by ReplayWeb.page itself (its ui.js and sw.js), served on loopback as a site
 * embedding it would serve them, in headless Chromium: the words of a wireframe page, which the
 * WACZ holds only in the archived XHTML, appear in the replayed page.
 */
requireTool(CHROMIUM, TOOL_PACKAGES[CHROMIUM]);

let dir: string;
let wacz: string;
let server: Server;
let origin: string;
let browser: BrowserContext;
let pages: { url: string; title: string; text: string }[];

/** A static site of four files; the WACZ answers range requests, which ReplayWeb.page reads it by. */
function serve(files: Record<string, { path: string; type: string }>): Promise<Server> {
  const site = createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://x').pathname];
    if (file === undefined) return response.writeHead(404).end();
    void stat(file.path).then(({ size }) => {
      const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
      const start = range ? Number(range[1]) : 0;
      const end = range && range[2] !== '' ? Math.min(Number(range[2]), size - 1) : size - 1;
      response.writeHead(range ? 206 : 200, {
        'content-type': file.type,
        'content-length': String(end - start + 1),
        'accept-ranges': 'bytes',
        ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
      });
      if (request.method === 'HEAD') return response.end();
      createReadStream(file.path, { start, end }).pipe(response);
    });
  });
  return new Promise((resolve) => site.listen(0, '127.0.0.1', () => resolve(site)));
}

describe('convert --to wacz, replayed by ReplayWeb.page in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-wacz-replay-'));
    const archive = await exportSample(dir);
    const report = await convertArchive({ archive, out: join(dir, 'out'), to: 'wacz' });
    wacz = join(dir, 'out', report.package!.file);
    const listed = await runTool('unzip', ['-p', wacz, 'pages/pages.jsonl']);
    pages = listed.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line) as (typeof pages)[number]);
    server = await serve({
      '/ui.js': { path: join(REPLAYWEBPAGE_DIR, 'ui.js'), type: 'text/javascript' },
      '/replay/sw.js': { path: join(REPLAYWEBPAGE_DIR, 'sw.js'), type: 'text/javascript' },
      '/team.wacz': { path: wacz, type: 'application/wacz' },
      '/': { path: join(dir, 'embed.html'), type: 'text/html' },
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium(CHROMIUM);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * The text of the frame ReplayWeb.page replays `url` in (its service worker serves it under
   * `/replay/w/{collection}/{timestamp}mp_/{url}`), or '' while there is none yet.
   */
  async function replayedText(page: Page, url: string): Promise<string> {
    const frame = page.frames().find((each) => each.url().includes('/replay/w/') && each.url().endsWith(`mp_/${url}`));
    return (
      (await frame
        ?.locator('html')
        .textContent({ timeout: 1000 })
        .catch(() => '')) ?? ''
    );
  }

  it('shows each sampled page with its labels', async () => {
    expect(pages.length).toBeGreaterThan(3);
    const labelled = pages.filter((p) => p.text.split('\n').length > 1).slice(0, 2);
    expect(labelled.length).toBe(2);
    // One tab for both, as a visitor's: a tab is a renderer for Chromium to start and end.
    const page = await browser.newPage();
    try {
      for (const wanted of labelled) await showsReplayed(page, wanted);
    } finally {
      await page.close();
    }
  }, 180_000);

  /** Opens the page embedding `wanted` in `page` and expects its replay to show the page's first label. */
  async function showsReplayed(page: Page, wanted: (typeof pages)[number]): Promise<void> {
    await writeFile(
      join(dir, 'embed.html'),
      `<!doctype html><meta charset="utf-8"><script src="/ui.js"></script>` +
        `<replay-web-page source="/team.wacz" url="${wanted.url}" embed="replayonly" style="height:600px"></replay-web-page>`,
      { flag: 'w' },
    );
    // The first visit installs ReplayWeb.page's service worker; a replay frame that loads before
    // the worker is active is answered by the plain server and never replays (ReplayWeb.page
    // reloads it only when no worker controls it yet). A visitor's second visit is the one
    // tested: the page is loaded again once the worker is active.
    await page.goto(`${origin}/`);
    await page.waitForFunction(
      // Run in the page; Node's types (this file's lib) have no navigator.
      async () =>
        (await (globalThis as unknown as ServiceWorkerPage).navigator.serviceWorker.getRegistration('/replay/'))?.active
          ?.state === 'activated',
      undefined,
      { timeout: 60_000, polling: 200 },
    );
    const label = (wanted.text.split('\n')[1] ?? '').trim();
    // Loaded again until the replay shows (as a visitor would reload a blank page): a reload that
    // meets the worker still taking in the WACZ may leave a frame that never fills.
    const shown = async (): Promise<string> => {
      let text = '';
      for (let attempt = 0; attempt < 6 && !text.includes(label); attempt++) {
        await page.reload();
        text = await until(
          async () => {
            const found = await replayedText(page, wanted.url);
            return found.includes(label) ? found : '';
          },
          { what: `the replay of ${wanted.url}`, timeoutMs: 20_000, intervalMs: 500 },
        ).catch(() => '');
      }
      return text;
    };
    expect(await shown()).toContain(label);
  }
});

/** What the page's readiness check reads of the browser's globals. */
interface ServiceWorkerPage {
  navigator: {
    serviceWorker: { getRegistration(scope: string): Promise<{ active: { state: string } | null } | undefined> };
  };
}
