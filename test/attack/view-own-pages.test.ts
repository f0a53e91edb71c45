import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileEntry } from '../../src/manifest/types.js';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { launchChromium, type BrowserContext } from '../browser/index.js';
import { readArchive } from '../helpers/archive.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { until } from '../helpers/until.js';
import { writeZip } from '../helpers/write-zip.js';
import { searchArchives } from '../search/search-archive-fixture.js';
import { closeAll, startListener, type Listening } from '../viewer/hostile-front.js';

/**
 * `view` renders index.html and the overview pages itself, the only pages it lets run a script (the
 * search box); a crafted archive tries every way around that. Its own index.html (huge, and not
 * the bytes its manifest records) and overview pages carry a refresh, a `<base>`, a script, a form
 * and links to another origin; it adds pages named almost like overview pages, one for a prototype
 * it does not have, and a prototype name made of the same markup, which the server's own pages
 * now render. The manifest agrees with every other byte. Chromium opens each page under `view`:
 * nothing may reach the listener, and no page may leave the archive.
 */
requireTool(CHROMIUM);

/** How long a page is given to act after its load event (a refresh of 0 s acts at once). */
const SETTLE_MS = 1500;
/** Larger than what `view` reads whole before serving (16 MiB). */
const HUGE = 40 * 1024 * 1024;

let dir: string;
let listener: Listening | undefined;
let listenerOrigin: string;
const heard: string[] = [];
let view: ArchiveServer;
let browser: BrowserContext | undefined;
let names: string[];

/** Markup that leaves the page on its own, or on the first click, for the listener. */
function leaving(tag: string): string {
  return (
    `<meta http-equiv="refresh" content="0;url=${listenerOrigin}/${tag}-refresh"><base href="${listenerOrigin}/${tag}-base/">` +
    `<script src="${listenerOrigin}/${tag}-script.js"></script><script>location.href=${JSON.stringify(`${listenerOrigin}/${tag}-inline`)}</script>` +
    `<form id="f" action="${listenerOrigin}/${tag}-form"></form><script>document.getElementById('f').submit()</script>` +
    `<a id="away" href="${listenerOrigin}/${tag}-link">away</a><a id="rel" href="rel">rel</a><img src="x.png">`
  );
}

const page = (tag: string, padding = 0): Buffer =>
  Buffer.concat([
    Buffer.from(`<!DOCTYPE html><html><head>${leaving(tag)}<title>crafted ${tag}</title></head><body>`, 'utf8'),
    Buffer.alloc(padding, ' '),
    Buffer.from('crafted</body></html>', 'utf8'),
  ]);

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-view-own-pages-'));
  listener = await startListener(heard);
  listenerOrigin = listener.origin;

  const { archive } = await searchArchives(dir);
  const { manifest, entries } = await readArchive(archive);
  const put = (file: FileEntry, data: Buffer, record = true): void => {
    if (record) Object.assign(file, { sha256: sha256(data), size: data.length });
    entries.set(file.path, { data, method: 8 });
  };
  for (const file of manifest.files) {
    // Huge, and not what the manifest records: read, it would be refused; it must not be read at all.
    if (file.path === 'index.html') put(file, page('index', HUGE), false);
    if (file.path.startsWith('overview/')) put(file, page(file.path));
  }
  for (const name of ['overview/prototype-03.html', 'overview/prototype-x.html', 'overview/prototype-999.html']) {
    const file: FileEntry = { ...(manifest.files[0] as FileEntry), path: name };
    put(file, page(name));
    manifest.files.push(file);
  }
  // A prototype whose name is the same markup: the pages the server renders show it as text.
  const record = manifest.prototypes['17'];
  const json = record?.revisions[String(record.revision)]?.files.find((f) => f.path.endsWith('/prototype.json'));
  if (record === undefined || json === undefined) throw new Error('the fixture has no prototype 17');
  const meta = JSON.parse((entries.get(json.path)?.data ?? Buffer.alloc(0)).toString('utf8')) as {
    prototypeData: { name: string };
  };
  meta.prototypeData.name = `</title></code>${leaving('name')}`;
  put(json, Buffer.from(JSON.stringify(meta), 'utf8'));
  entries.set('manifest.json', { data: Buffer.from(JSON.stringify(manifest), 'utf8'), method: 8 });
  names = [...entries.keys()];
  const out = join(dir, 'crafted.zip');
  await writeZip(
    [...entries].map(([name, { data }]) => ({ name, data, store: false })),
    out,
  );
  view = await serveArchive(out);
  browser = await launchChromium(CHROMIUM);
  visits = new Map([...RENDERED, ...ALMOST].map((path) => [path, open(path)]));
  // Each is awaited by its test; one that fails before then is not an unhandled rejection.
  for (const seen of visits.values()) seen.catch(() => undefined);
});

/** The pages the tests open in Chromium. */
const RENDERED = ['', 'index.html', 'overview/prototype-3.html', 'overview/prototype-17.html'];
const ALMOST = ['overview/prototype-x.html'];

interface Seen {
  url: string;
  text: string;
  targets: string[];
  meta: string[];
}

/**
 * Every page opened at once, each in its own tab, as soon as view serves: each is given SETTLE_MS to
 * act, and one after the other those waits were most of this file's time. A page that leaves calls
 * the listener, which every test checks is still unheard.
 */
let visits: Map<string, Promise<Seen>>;

function visit(path: string): Promise<Seen> {
  const seen = visits.get(path);
  if (seen === undefined) throw new Error(`${path} is not among the pages opened`);
  return seen;
}

afterAll(async () => {
  await Promise.allSettled(visits?.values() ?? []);
  await closeAll(browser, view, listener);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Opens `path` under view, lets it act, and hands back where every link, image and script of it leads. */
async function open(path: string): Promise<Seen> {
  const tab = await (browser as BrowserContext).newPage();
  try {
    await tab.goto(view.url + path);
    await tab.waitForTimeout(SETTLE_MS);
    // Run in the page: where each link, image, script and form leads, as the browser resolves it.
    const seen = await tab.evaluate<{ text: string; targets: string[]; meta: string[] }>(`({
      text: document.body.innerText,
      targets: [
        ...[...document.querySelectorAll('a')].map((a) => a.href),
        ...[...document.querySelectorAll('img')].map((i) => i.src),
        ...[...document.querySelectorAll('script[src]')].map((s) => s.src),
        ...[...document.querySelectorAll('form')].map((f) => f.action),
        document.baseURI,
      ],
      meta: [...document.querySelectorAll('base, meta[http-equiv]')].map((m) => m.outerHTML),
    })`);
    return { url: tab.url(), ...seen };
  } finally {
    await tab.close();
  }
}

describe('view of an archive crafted against its own pages', () => {
  it.each(RENDERED)(
    '%s is the page the tool renders: it stays, every link leads into the archive, the name shows as text',
    async (path) => {
      const seen = await visit(path);
      expect(heard).toEqual([]);
      expect(seen.url.startsWith(view.url)).toBe(true);
      expect(seen.text).not.toContain('crafted');
      for (const target of seen.targets) expect(target.startsWith(view.url), target).toBe(true);
      // The one `<meta http-equiv>` is the policy the renderer writes.
      expect(seen.meta).toEqual([expect.stringMatching(/^<meta http-equiv="Content-Security-Policy"/)]);
      // Prototype 17's name, on the pages that show it, as text.
      expect(seen.text.includes('</title></code><meta http-equiv="refresh"')).toBe(
        path !== 'overview/prototype-3.html',
      );
    },
  );

  it.each(ALMOST)(
    'serves %s, named almost like an overview page, as an entry with no script: its refresh and script do nothing',
    async (path) => {
      const answer = await fetch(view.url + path);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('crafted');
      expect(answer.headers.get('content-security-policy')).toMatch(/script-src 'none'.*sandbox allow-same-origin$/);
      const seen = await visit(path);
      expect(heard).toEqual([]);
      expect(seen.url).toBe(view.url + path);
    },
  );

  it.each(['overview/prototype-999.html', 'overview/prototype-03.html'])(
    'has no %s: its name is an overview page’s, of a prototype the manifest does not hold, whatever the archive holds under it',
    async (path) => {
      const answer = await fetch(view.url + path);
      expect(answer.status).toBe(404);
      expect(await answer.text()).not.toContain('crafted');
      expect(answer.headers.get('content-security-policy')).not.toContain('allow-scripts');
    },
  );

  it('lets no entry of the archive run a script: only the pages it renders may, and only the box', async () => {
    const scripted = new Map<string, string>();
    for (const name of names) {
      const answer = await fetch(view.url + name, { method: 'HEAD' });
      const policy = answer.headers.get('content-security-policy') ?? '';
      if (policy.includes('allow-scripts')) scripted.set(name, policy);
    }
    const prototypes = [...names].filter((name) => /^overview\/prototype-[1-9][0-9]*\.html$/.test(name));
    expect([...scripted.keys()].sort()).toEqual(
      ['index.html', ...prototypes.filter((n) => !n.endsWith('-999.html'))].sort(),
    );
    for (const [name, policy] of scripted) {
      expect(policy, name).toContain(`script-src ${view.url}search/search-box.js;`);
      expect(policy, name).toMatch(/sandbox allow-scripts allow-same-origin$/);
    }
  });

  it('keeps the search box working on the page it renders in place of the crafted one', async () => {
    const tab = await (browser as BrowserContext).newPage();
    try {
      await tab.goto(`${view.url}index.html?q=${encodeURIComponent('支払')}`);
      const hits = await until(
        async () =>
          (await tab.locator('#search-hits li').count()) > 0 &&
          tab.locator('#search-hits li a').first().getAttribute('href'),
        { what: 'a hit' },
      );
      expect(new URL(hits, view.url).href.startsWith(view.url)).toBe(true);
      expect(heard).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
