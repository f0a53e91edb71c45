import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { parseRecordLine } from '../../src/search/search-record.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';

requireTool(CHROMIUM);
requireTool('unzip');
const run = promisify(execFile);

/**
 * Names and a text from the service, each made to break out of where index.html, an overview page
 * or the search box puts it: a script end tag, a CDATA end, an attribute end, line and paragraph
 * separators (which once ended a JavaScript string). Each, if it ever ran, would mark the page's
 * root element, which Chromium's dump of the DOM shows. Lone surrogates go in a prototype of their
 * own (LONE), searched apart: Chromium's --dump-dom aborts on a DOM text holding one, though the
 * page itself shows it as U+FFFD.
 */
const PROTOTYPE =
  "zzmark </script><script>document.documentElement.id='pwned1'</script><img src=x onerror=\"document.documentElement.id='pwned2'\"> ]]> \u2028";
const PAGE = "zzmark <svg onload=document.documentElement.id='pwned3'> '\u2029'";
const TEXT = "zzmark \"><img src=x onerror=document.documentElement.id='pwned4'> </title></style></textarea>";
const LONE = 'qqlone \ud800 high \udc00 low \ud83d';

const HEADLESS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  // Virtual time: the page and the parts it loads run to their end without a real wait.
  '--virtual-time-budget=10000',
];

/** The DOM Chromium holds once the page and what it loads have run. */
async function dumpDom(url: string, profile: string): Promise<string> {
  const args = [...HEADLESS, `--user-data-dir=${profile}`, '--dump-dom', url];
  const { stdout } = await run(CHROMIUM, args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe('hostile names in the search box and index.html, in Chromium from file://', () => {
  let dir: string;
  let root: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-box-'));
    const service = await startFakeService({ seed: 1 });
    try {
      const id = service.store.addPrototype(PROTOTYPE);
      const pageId = service.store.addPage(id, PAGE);
      service.store.addElement(id, pageId, {
        type: 'text',
        text: TEXT,
        position: { x: 10, y: 10 },
        dimensions: { width: 80, height: 20 },
      });
      service.store.addPrototype(LONE);
      const archive = join(dir, 'archive.zip');
      const result = await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
      expect(result.complete).toBe(true);
      root = join(dir, 'unzipped');
      await run('unzip', ['-q', archive, '-d', root]);
    } finally {
      await service.close();
    }
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('index.html searched for them shows each as text, and none of them runs', async () => {
    const url = `${pathToFileURL(join(root, 'index.html')).href}?q=zzmark`;
    const dom = await dumpDom(url, join(dir, 'profile'));
    expect(dom).toMatch(/<html[^>]*>/);
    expect(/<html[^>]*>/.exec(dom)?.[0]).not.toMatch(/pwned/);
    // Three hits: the prototype's name, the page's name and the element's text.
    expect(dom.match(/<li class="hit"/g)).toHaveLength(3);
    expect(dom).not.toMatch(/<img[^>]*onerror|<svg[^>]*onload|<script>document/);
    expect(dom).toContain('&lt;/script&gt;&lt;script&gt;document.documentElement.id=');
  }, 60_000);

  it('index.html searched for names with lone surrogates renders them, and Chromium does not fail on them', async () => {
    const shot = join(dir, 'lone.png');
    const url = `${pathToFileURL(join(root, 'index.html')).href}?q=qqlone`;
    await run(CHROMIUM, [...HEADLESS, `--user-data-dir=${join(dir, 'profile')}`, `--screenshot=${shot}`, url]);
    // A PNG: its signature, and a picture of the page.
    expect((await readFile(shot)).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  }, 60_000);

  it('the overview and page views of the prototype show them as text, and none of them runs', async () => {
    const views = (await readdir(join(root, 'prototypes'), { recursive: true })).filter((file) =>
      file.endsWith('.html'),
    );
    expect(views.length).toBeGreaterThan(0);
    const hostile: string[] = [];
    for (const view of views)
      if ((await readFile(join(root, 'prototypes', view), 'utf8')).includes('zzmark')) hostile.push(view);
    // The prototype's overview and its page's view at least.
    expect(hostile.length).toBeGreaterThanOrEqual(2);
    for (const view of hostile) {
      const dom = await dumpDom(pathToFileURL(join(root, 'prototypes', view)).href, join(dir, 'profile'));
      expect({ view, root: /<html[^>]*>/.exec(dom)?.[0] }).not.toEqual({ view, root: expect.stringMatching(/pwned/) });
      expect({ view, injected: /<img[^>]*onerror|<svg[^>]*onload|<script>document/.test(dom) }).toEqual({
        view,
        injected: false,
      });
    }
  }, 120_000);

  it('writes the names into the index parts escaped, each record on a line of its own', async () => {
    const parts = await readFile(join(root, 'search', 'index.js'), 'utf8');
    const ids = [...parts.matchAll(/^"(\d+)",?$/gm)].map((m) => m[1] as string);
    const texts = await Promise.all(ids.map((id) => readFile(join(root, 'search', `prototype-${id}.js`), 'utf8')));
    const hostile = texts.find((text) => text.includes('zzmark')) ?? '';
    expect(hostile).not.toMatch(/[\u2028\u2029]/);
    const lines = hostile.split('\n').slice(1, -2);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => parseRecordLine(line) === undefined)).toEqual([]);
    const records = lines.map((line) => parseRecordLine(line)?.record.text);
    expect(records).toEqual(
      expect.arrayContaining([TEXT.replace(/\ud83d$/, '').trimEnd()].map((t) => expect.stringContaining(t))),
    );
  });
});
