import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { launchChromium, type BrowserContext } from '../browser/index.js';
import { readArchive } from '../helpers/archive.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { writeZip } from '../helpers/write-zip.js';
import { searchArchives } from '../search/search-archive-fixture.js';
import { closeAll, startListener, type Listening } from '../viewer/hostile-front.js';

/**
 * `view` on an archive from someone else, whose manifest agrees with its bytes: its index.html and
 * overview pages, the viewer's own pages by name, are served with a policy that lets the search
 * box's script run (`sandbox allow-scripts allow-same-origin`), and that sandbox also lets a
 * `<meta http-equiv="refresh">` act. No Content-Security-Policy governs a refresh, so a crafted
 * index.html sends the browser that opened the archive to any address, as soon as it loads.
 */
requireTool(CHROMIUM);

/** How long a page is given to act after its load event (a refresh of 0 s acts at once). */
const SETTLE_MS = 1500;

let dir: string;
let listener: Listening | undefined;
let listenerOrigin: string;
const heard: string[] = [];
let view: ArchiveServer | undefined;
let browser: BrowserContext | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-view-crafted-refresh-'));
  listener = await startListener(heard);
  listenerOrigin = listener.origin;

  const { archive } = await searchArchives(dir);
  const { manifest, entries } = await readArchive(archive);
  const crafted = Buffer.from(
    `<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url=${listenerOrigin}/refresh">` +
      `<title>crafted</title></head><body>crafted</body></html>`,
    'utf8',
  );
  for (const file of manifest.files)
    if (file.path === 'index.html' || file.path.startsWith('overview/')) {
      file.sha256 = createHash('sha256').update(crafted).digest('hex');
      file.size = crafted.length;
      entries.set(file.path, { data: crafted, method: 8 });
    }
  entries.set('manifest.json', { data: Buffer.from(JSON.stringify(manifest), 'utf8'), method: 8 });
  const out = join(dir, 'crafted.zip');
  await writeZip(
    [...entries].map(([name, { data }]) => ({ name, data, store: false })),
    out,
  );
  view = await serveArchive(out);
  browser = await launchChromium(CHROMIUM);
});

afterAll(async () => {
  await closeAll(browser, view, listener);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('view of a crafted archive', () => {
  it('does not let its index.html send the browser to another origin', async () => {
    const page = await (browser as BrowserContext).newPage();
    try {
      await page.goto(`${(view as ArchiveServer).url}index.html`);
      await page.waitForTimeout(SETTLE_MS);
      expect(heard).toEqual([]);
      expect(page.url().startsWith((view as ArchiveServer).url)).toBe(true);
    } finally {
      await page.close();
    }
  });
});
