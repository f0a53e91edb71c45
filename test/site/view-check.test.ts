import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, serialize } from 'parse5';
import { describe, expect, it } from 'vitest';
import { viewRewrite } from '../../src/site/page-views.js';
import { sanitizeTree, withViewHead } from '../../src/site/sanitize-html.js';
import { finishView, pageView, prepareView } from '../../src/site/view-build.js';
import { checkView } from '../../src/site/view-check.js';
import { staysInside } from '../../src/site/view-urls.js';
import { quoted } from '../../src/site/view-css.js';
import { openViewBuilder } from '../../src/site/view-pool.js';
import { VIEW_CSP } from '../../src/site/view-policy.js';
import type { StoredFile } from '../../src/storage/stored-file.js';

const VIEW = 'prototypes/3/r6/pages/page1.view.html';
const SERVICE = { origin: 'https://service.example', basePath: '' };
const REWRITE = viewRewrite(VIEW, 'https://service.example/rabbit/api/prototypes/3/pages/page1.html', SERVICE, {
  pages: new Map([['/rabbit/api/prototypes/3/pages/page2.html', 'prototypes/3/r6/pages/page2.view.html']]),
  sheets: new Map(),
  catalog: {
    assets: new Map([['/static/a.png', { path: 'assets/0a0a.png' } as StoredFile]]),
    archived: new Map(),
    foreign: new Map(),
  },
});
const TEXT_VIEW = 'only its text is shown';

/** A page as the service renders it: XHTML 1.0 Strict, a stylesheet, an image, a link, inline styles. */
const XHTML_PAGE =
  `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" ` +
  `"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en">` +
  `<head><title>Login &amp; more</title></head><body><div class="page" id="page1">` +
  `<div class="element" id="element3" style="left:116px;top:135px"><a href="page2.html">next</a></div>` +
  `<img src="/static/a.png" alt="" /></div></body></html>`;

describe('the final check of a view', () => {
  it('passes an ordinary service page: its view is drawn, not replaced by its text', () => {
    const out = pageView(XHTML_PAGE, REWRITE, VIEW);
    expect(out).not.toContain(TEXT_VIEW);
    expect(out).toContain('<a href="page2.view.html">next</a>');
    expect(out).toContain('<img src="../../../../assets/0a0a.png" alt="">');
  });

  it.each([
    ['\\3c/style\\3e', String.raw`\3c/style\3e`],
    ['\\3C /STYLE\\3E', String.raw`\3C /STYLE\3E`],
    ['\\00003c', String.raw`\00003c/style\00003e`],
  ])('a data: URL spelling %s in a <style> stays inside it', (_name, close) => {
    const out = pageView(
      `<!DOCTYPE html><html><head><style>.a{background:url("data:image/png,${close}<a href=/p.html>x</a>")}</style>` +
        `</head><body><p>text</p></body></html>`,
      REWRITE,
      VIEW,
    );
    const document = parse(out);
    // Only the view's own mark style and the page's one style: no element escaped from it.
    expect(serialize(document)).not.toMatch(/<\/style>\s*<a/i);
    expect(out).not.toContain(TEXT_VIEW);
    expect(out).toMatch(/url\("data:image\/png,\\3c \/style\\3e \\3c a href=\/p.html\\3e x\\3c \/a\\3e "\)/i);
  });

  it('writes <, > and & in a CSS URL as escapes the CSS reader decodes back', () => {
    expect(quoted('a</style>&b')).toBe(String.raw`"a\3c /style\3e \26 b"`);
  });

  it('replaces a view whose bytes do not parse back into the intended tree', () => {
    const document = parse('<!DOCTYPE html><html><head><style>x</style></head><body><p>a</p></body></html>');
    sanitizeTree(document);
    withViewHead(document, VIEW_CSP);
    const html = serialize(document).replace('<style>x</style>', '<style>x</style><a href="/raw.html">y</a>');
    expect(checkView(html, document, new Set(), VIEW)).toMatchObject({ kind: 'changed' });
  });

  it.each([
    ['another host, unasked', '//attacker.example/a.png'],
    ['a file: URL', 'file:///etc/passwd'],
    ['a path above the archive', '../../../../../x.png'],
    ['a rooted path', '/assets/x.png'],
    ['a document as data:', 'data:text/html,<script>1</script>'],
  ])('replaces a view whose rewriting wrote %s, with the page text', (_name, target) => {
    const prepared = prepareView(Buffer.from(XHTML_PAGE), 'application/xhtml+xml');
    const resolved = prepared.references.map(([kind]) => (kind === 'resource' ? target : undefined));
    const view = finishView(prepared, resolved, VIEW);
    expect(['unexpected-reference', 'unsafe-attribute']).toContain(view.fault?.kind);
    expect(view.html).toContain(TEXT_VIEW);
    expect(view.html).toContain('Login &amp; more');
    expect(view.html).not.toContain(target.replace(/&/g, '&amp;'));
  });

  it.each([
    ['#top', 'link', true],
    ['../../../../assets/a.png', 'resource', true],
    ['page2.view.html#x', 'link', true],
    ['https://example.com/', 'link', true],
    ['https://example.com/', 'resource', false],
    ['../../../../../a.png', 'resource', false],
    ['data:image/png;base64,AA', 'resource', true],
    ['data:image/png;base64,AA', 'stylesheet', false],
    ['\\\\host\\share', 'resource', false],
    ['javascript:alert(1)', 'link', false],
  ] as const)('%s as a %s reference stays inside: %s', (value, kind, inside) => {
    expect(staysInside(value, kind, VIEW)).toBe(inside);
  });
});

/** The worker's script as the build writes it: `npm test` builds before the suite runs. */
const BUILT_WORKER = new URL('../../dist/site/view-worker.js', import.meta.url);

describe('the view threads', () => {
  it('build in a worker thread the same bytes as in the calling thread', async () => {
    expect(existsSync(fileURLToPath(BUILT_WORKER)), 'dist/ is built (npm test builds it)').toBe(true);
    const pool = openViewBuilder({ workerUrl: BUILT_WORKER, threads: 2 });
    const inline = openViewBuilder({ threads: 0 });
    try {
      const pages = [XHTML_PAGE, '<p>two</p><img src="/static/a.png">', '<a href="">self</a>'];
      for (const page of pages) {
        const job = {
          body: Buffer.from(page),
          contentType: 'text/html',
          viewPath: VIEW,
          resolve: (refs: readonly (readonly ['link' | 'resource' | 'stylesheet', string])[]) =>
            refs.map(([kind, value]) => REWRITE(value, kind)),
        };
        const [threaded, here] = await Promise.all([pool.build(job), inline.build(job)]);
        expect(threaded.bytes.toString('utf8')).toBe(here.bytes.toString('utf8'));
        expect(threaded.fault).toBeUndefined();
      }
    } finally {
      await pool.close();
    }
  });

  it('with inlineUpTo, give a page larger than that to a thread, whose capped heap stops a hostile one', async () => {
    // The thread's heap capped at 32 MiB, not the export's 256: a hostile page of 2 MiB, not 8, reaches
    // the cap, in a fraction of the time.
    const builder = openViewBuilder({ workerUrl: BUILT_WORKER, threads: 1, inlineUpTo: 64 * 1024, threadHeapMb: 32 });
    const job = (page: string) => ({
      body: Buffer.from(page),
      contentType: 'text/html',
      viewPath: VIEW,
      resolve: () => [],
    });
    try {
      const small = await builder.build(job('<p>small</p>'));
      expect(small.fault).toBeUndefined();
      expect(small.bytes.toString('utf8')).toContain('<p>small</p>');
      // An ordinary page past inlineUpTo is built in the capped thread: what stops the hostile one
      // below is its size, not a cap too small for any page.
      const ordinary = '<div class="element"><p>some text</p></div>'.repeat(2_000);
      expect(ordinary.length).toBeGreaterThan(64 * 1024);
      const built = await builder.build(job(ordinary));
      expect(built.fault).toBeUndefined();
      expect(built.bytes.toString('utf8')).toContain('<div class="element"><p>some text</p></div>'.repeat(2_000));
      // Some 2 MiB of elements side by side (not nested: a stack overflow would fail the build too,
      // capped or not): a tree past the thread's cap, which the calling thread would build, at the
      // whole export's peak.
      const hostile = await builder.build(job('<i a=1 b=2 c=3></i>'.repeat(110_000)));
      expect(hostile.fault).toMatchObject({ kind: 'not-built', message: expect.stringMatching(/memory limit/) });
      expect(hostile.bytes.toString('utf8')).toContain(TEXT_VIEW);
    } finally {
      await builder.close();
    }
  });

  it('with inlineUpTo, give a page under that size nested too deep to build the notice, not a crashed export', async () => {
    const builder = openViewBuilder({ workerUrl: BUILT_WORKER, threads: 1, inlineUpTo: 256 * 1024 });
    // 52,000 nested divs: 260 KB, under the size built in the calling thread, yet deep enough that
    // building its view overflows the stack. In a thread that is a failed view; here it must be too.
    const page = '<!DOCTYPE html><html><body>' + '<div>'.repeat(52_000) + 'deep</body></html>';
    try {
      const view = await builder.build({
        body: Buffer.from(page),
        contentType: 'text/html',
        viewPath: VIEW,
        resolve: () => [],
      });
      expect(view.fault).toMatchObject({ kind: 'not-built' });
      expect(view.bytes.toString('utf8')).toContain(TEXT_VIEW);
    } finally {
      await builder.close();
    }
  });

  it('give a page whose thread died the notice, never the page as it was', async () => {
    const pool = openViewBuilder({ workerUrl: BUILT_WORKER, threads: 1 });
    const built = pool.build({
      body: Buffer.from('<p>x</p>'),
      contentType: 'text/html',
      viewPath: VIEW,
      resolve: () => [],
    });
    await pool.close();
    const view = await built;
    expect(view.fault).toMatchObject({ kind: 'not-built' });
    expect(view.bytes.toString('utf8')).toContain(TEXT_VIEW);
  });
});
