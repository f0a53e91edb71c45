import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type BrowserContext } from '../browser/index.js';
import { visitEach } from '../helpers/visit-each.js';
import { hostileStylePage, pageHtml } from '../helpers/hostile-html.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { VIEW_ASSETS, VIEW_PAGES, VIEW_PATH, VIEW_SHEETS, viewOf } from '../helpers/view-of.js';
import { startListener, type Listening } from './hostile-front.js';

/**
 * Views of generated hostile pages (see test/attack/view-property.test.ts), each written into an
 * extraction of its own beside the files its view may point at (the raw page with a script, the
 * sibling view, the archived assets), opened from file:// in one Chromium session, left alone,
 * then clicked in the middle: no script runs and nothing is asked for outside the extraction.
 * A sample, since a browser is slow: pages of `<style>` elements (hostileStylePage, where the
 * cleaning has been got around), VIEW_BROWSER_SEEDS of them from VIEW_PROPERTY_SEED on.
 */

requireTool(CHROMIUM);

const COUNT = Number(process.env.VIEW_BROWSER_SEEDS ?? 20);
const FIRST_SEED = Number(process.env.VIEW_PROPERTY_SEED ?? 1);
const SEEDS = Array.from({ length: COUNT }, (_, i) => FIRST_SEED + i);
const SETTLE_MS = 200;
const TITLE = 'hostile page';

const heard: string[] = [];
let listener: Listening;
let dir: string;
let browser: BrowserContext | undefined;

/** The files an extraction holds beside the view: what a reference may reach, and what it must not run. */
function extractionFiles(ran: string): Map<string, string> {
  const acting = `<script>document.title='pwned';location.href='${ran}'</script>`;
  const files = new Map<string, string>();
  files.set(VIEW_PATH.replace(/\.view\.html$/, '.html'), `<title>raw</title>${acting}`);
  for (const view of VIEW_PAGES.values()) if (view !== VIEW_PATH) files.set(view, `<title>${TITLE}</title>sibling`);
  for (const path of [...VIEW_ASSETS.values(), ...VIEW_SHEETS.values()])
    files.set(
      path,
      path.endsWith('.svg')
        ? `<svg xmlns="http://www.w3.org/2000/svg">${acting.replace(/'/g, '&apos;')}</svg>`
        : path.endsWith('.css')
          ? 'body{color:#333}'
          : 'x',
    );
  return files;
}

beforeAll(async () => {
  listener = await startListener(heard);
  dir = await mkdtemp(join(tmpdir(), 'rabbit-generated-views-'));
  // No tab of its own: the visits open theirs (a tab is a renderer for Chromium to start and end).
  browser = await launchChromium(CHROMIUM);
});

afterAll(async () => {
  await browser?.close();
  await listener?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Writes the view of `seed`'s page into an extraction of its own; its root and the view's URL. */
async function extractionOf(seed: number): Promise<{ root: string; url: string }> {
  const root = join(dir, `seed-${seed}`, 'extraction');
  // The page's script calls home to the listener, so a script that runs is heard, under its seed.
  const ran = `${listener.origin}/ran/${seed}`;
  const html = pageHtml(hostileStylePage(seed)).replaceAll('http://attacker.example/ran', ran);
  const files = extractionFiles(ran);
  let view: string;
  try {
    view = viewOf(html);
  } catch (error) {
    // A page whose view cannot be made is a failure of its own, shown as the view.
    view = `<title>${TITLE}</title>view not made: ${String(error)}`;
  }
  files.set(VIEW_PATH, view);
  for (const [path, text] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  // What an escaped climb aims at: beside the extraction, there to be loaded if anything reaches it.
  await writeFile(join(dir, `seed-${seed}`, 'outside.css'), 'body{outline:5px solid red}');
  return { root, url: pathToFileURL(join(root, VIEW_PATH)).href };
}

function inside(root: string, url: string): boolean {
  if (url.startsWith('data:')) return true;
  const parsed = new URL(url);
  if (parsed.protocol !== 'file:' || parsed.host !== '') return false;
  return resolve(fileURLToPath(`file://${parsed.pathname}`)).startsWith(`${resolve(root)}${sep}`);
}

describe(`views of generated pages (seeds ${SEEDS.join(' ')}) opened from file://`, () => {
  it('load nothing outside their extraction, and run no script, opened or clicked', async () => {
    const seen = await visitEach(browser as BrowserContext, SEEDS, async (seed, tab) => {
      const size = tab.page.viewportSize() ?? { width: 800, height: 600 };
      const { root, url } = await extractionOf(seed);
      tab.requests.length = 0;
      await tab.page.goto(url, { waitUntil: 'load' });
      await tab.page.waitForTimeout(SETTLE_MS);
      const opened = tab.requests.filter((r) => !inside(root, r));
      tab.requests.length = 0;
      await tab.page.mouse.click(size.width / 2, size.height / 2);
      await tab.page.waitForTimeout(SETTLE_MS);
      // A click may follow a link to another web site (a reader's choice); it must not reach a file outside, nor run script.
      const clicked = tab.requests.filter((r) => !inside(root, r) && !/^https?:\/\/attacker\.example\//.test(r));
      const title = await tab.page.title().catch(() => '');
      const heardOf = heard.filter((path) => new RegExp(`^/ran/${seed}(?![0-9])`).test(path));
      return { seed, opened, clicked, heard: heardOf, pwned: title === 'pwned' };
    });
    expect(seen.filter((s) => s.opened.length + s.clicked.length + s.heard.length > 0 || s.pwned)).toEqual([]);
    // Nor from any page after its own visit was over.
    expect(heard).toEqual([]);
  });
});
