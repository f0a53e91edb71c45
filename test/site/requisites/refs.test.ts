import { describe, expect, it } from 'vitest';
import { scanCss } from '../../../src/site/requisites/css-refs.js';
import { scanHtml } from '../../../src/site/requisites/html-refs.js';
import { resolveReference, type Resolution } from '../../../src/site/requisites/resolve-ref.js';
import { applyReplacements, relativeEntryUrl } from '../../../src/site/requisites/rewrite.js';
import { assetPath, extensionFor } from '../../../src/site/requisites/asset-types.js';
import { isSafeEntryName } from '../../../src/api/paths.js';

const service = { origin: 'https://pidoco.com', basePath: '' };
const page = 'https://pidoco.com/rabbit/api/prototypes/3/pages/page1.html';
const latin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

describe('scanHtml', () => {
  const cases: [string, string, { value: string; kind: string }[]][] = [
    ['stylesheet link', '<link rel="stylesheet" href="/a.css" />', [{ value: '/a.css', kind: 'stylesheet' }]],
    ['other link rels are not requisites', '<link rel="canonical" href="/x" />', []],
    ['icon link', "<link rel='shortcut icon' href='fav.ico'>", [{ value: 'fav.ico', kind: 'resource' }]],
    ['img, unquoted', '<img src=logo.png alt=x>', [{ value: 'logo.png', kind: 'resource' }]],
    ['entities decoded', '<img src="/i?a=1&amp;b=2" />', [{ value: '/i?a=1&b=2', kind: 'resource' }]],
    ['anchor is a link', '<a href="page2.html">x</a>', [{ value: 'page2.html', kind: 'link' }]],
    ['background attribute', '<td background="bg.gif"></td>', [{ value: 'bg.gif', kind: 'resource' }]],
    ['style attribute url()', '<div style="background:url(\'b.png\')"></div>', [{ value: 'b.png', kind: 'resource' }]],
    [
      'style element',
      '<style>@import "c.css"; p{background:url(d.png)}</style>',
      [
        { value: 'c.css', kind: 'stylesheet' },
        { value: 'd.png', kind: 'resource' },
      ],
    ],
    [
      'srcset candidates',
      '<img srcset="a.png 1x, b.png 2x" />',
      [
        { value: 'a.png', kind: 'resource' },
        { value: 'b.png', kind: 'resource' },
      ],
    ],
    [
      'comments are skipped',
      '<!-- <img src="no.png"> --><img src="yes.png">',
      [{ value: 'yes.png', kind: 'resource' }],
    ],
    [
      'script bodies are skipped',
      '<script>var s = "<img src=no.png>";</script><img src="yes.png">',
      [{ value: 'yes.png', kind: 'resource' }],
    ],
    ['non-ASCII around refs', latin1('<p>Übersicht 🏠</p><img src="ä.png">'), [{ value: 'ä.png', kind: 'resource' }]],
  ];
  it.each(cases)('%s', (_, html, expected) => {
    const refs = scanHtml(html);
    expect(refs.map(({ value, kind }) => ({ value, kind }))).toEqual(expected);
    // Offsets point at the value as written, for splicing.
    for (const ref of refs) expect(html.slice(ref.start, ref.end).length).toBeGreaterThan(0);
  });
});

describe('scanCss', () => {
  const cases: [string, string, { value: string; kind: string }[]][] = [
    ['unquoted', 'a{background:url(/img/a.png)}', [{ value: '/img/a.png', kind: 'url' }]],
    ['double quotes', 'a{background:url("../img/b.png")}', [{ value: '../img/b.png', kind: 'url' }]],
    ['single quotes, spaces', "a{background:url(  'c.png'  )}", [{ value: 'c.png', kind: 'url' }]],
    ['import string', '@import "x.css";', [{ value: 'x.css', kind: 'import' }]],
    ['import url', '@import url(y.css) screen;', [{ value: 'y.css', kind: 'import' }]],
    ['comments skipped', '/* url(no.png) */ b{background:url(yes.png)}', [{ value: 'yes.png', kind: 'url' }]],
    ['strings are not urls', 'a::after{content:"url(no.png)"}', []],
    ['escapes decoded', 'a{background:url(a\\(1\\).png)}', [{ value: 'a(1).png', kind: 'url' }]],
    ['not a url function', 'a{x:myurl(no.png)}', []],
  ];
  it.each(cases)('%s', (_, css, expected) => {
    expect(scanCss(css).map(({ value, kind }) => ({ value, kind }))).toEqual(expected);
  });
});

describe('resolveReference', () => {
  const cases: [string, string, Resolution][] = [
    [
      'absolute on the host',
      'https://pidoco.com/rabbit/static/css/page.css',
      {
        kind: 'service',
        source: '/rabbit/static/css/page.css',
        request: '/rabbit/static/css/page.css',
        url: 'https://pidoco.com/rabbit/static/css/page.css',
      },
    ],
    [
      'root-relative',
      '/rabbit/static/img/logo.png',
      {
        kind: 'service',
        source: '/rabbit/static/img/logo.png',
        request: '/rabbit/static/img/logo.png',
        url: 'https://pidoco.com/rabbit/static/img/logo.png',
      },
    ],
    [
      'relative',
      '../../../../static/img/icon.png',
      {
        kind: 'service',
        source: '/rabbit/static/img/icon.png',
        request: '/rabbit/static/img/icon.png',
        url: 'https://pidoco.com/rabbit/static/img/icon.png',
      },
    ],
    [
      'query kept, api_key dropped',
      '/s/a.css?v=2&api_key=SECRET',
      { kind: 'service', source: '/s/a.css', request: '/s/a.css?v=2', url: 'https://pidoco.com/s/a.css?v=2' },
    ],
    [
      'dot segments cannot climb above the root',
      '../../../etc/passwd',
      {
        kind: 'service',
        source: '/rabbit/api/etc/passwd',
        request: '/rabbit/api/etc/passwd',
        url: 'https://pidoco.com/rabbit/api/etc/passwd',
      },
    ],
    ['foreign host', 'https://fonts.example.com/x.css', { kind: 'foreign', url: 'https://fonts.example.com/x.css' }],
    ['protocol-relative foreign', '//evil.example/x', { kind: 'foreign', url: 'https://evil.example/x' }],
    ['other scheme on the same host', 'http://pidoco.com/a.png', { kind: 'foreign', url: 'http://pidoco.com/a.png' }],
    [
      'credentials never travel',
      'https://user:pw@pidoco.com/a.png',
      { kind: 'foreign', url: 'https://pidoco.com/a.png' },
    ],
    ['javascript:', 'javascript:alert(1)', { kind: 'ignored', reason: 'scheme' }],
    ['file:', 'file:///etc/passwd', { kind: 'ignored', reason: 'scheme' }],
    ['data: URI', 'data:image/png;base64,AAAA', { kind: 'ignored', reason: 'data' }],
    ['fragment', '#top', { kind: 'ignored', reason: 'fragment' }],
    ['empty', '  ', { kind: 'ignored', reason: 'empty' }],
  ];
  it.each(cases)('%s', (_, ref, expected) => {
    expect(resolveReference(ref, page, service)).toEqual(expected);
  });

  it('keeps to the base path of a service that lives below one', () => {
    const below = { origin: 'https://host.example', basePath: '/tool' };
    const base = 'https://host.example/tool/rabbit/api/prototypes/3/pages/page1.html';
    expect(resolveReference('/tool/rabbit/static/a.css', base, below)).toMatchObject({
      kind: 'service',
      source: '/rabbit/static/a.css',
    });
    // On the service's host yet outside its base path: named, so the archive can say it is missing.
    expect(resolveReference('/other/a.css', base, below)).toEqual({
      kind: 'foreign',
      url: 'https://host.example/other/a.css',
      servicePath: '/other/a.css',
    });
  });

  it.each([
    ['https://cdn.example.org/x.png?api_key=SECRET', 'https://cdn.example.org/x.png'],
    ['https://cdn.example.org/x.png?v=1&API_KEY=SECRET&w=2', 'https://cdn.example.org/x.png?v=1&w=2'],
    ['https://cdn.example.org/x.png?api_key=a&api_key=b#f', 'https://cdn.example.org/x.png'],
    ['https://cdn.example.org/x.png?v=%41', 'https://cdn.example.org/x.png?v=%41'],
  ])('a foreign reference %s is listed as %s: no api_key, the rest as written', (ref, url) => {
    expect(resolveReference(ref, page, service)).toEqual({ kind: 'foreign', url });
  });
});

describe('resolveReference: the loopback names are one origin', () => {
  const asset = '/rabbit/static/img/logo.png';
  const resolve = (origin: string, other: string): Resolution =>
    resolveReference(`${other}${asset}?v=1`, `${origin}/rabbit/api/prototypes/3/pages/page1.html`, {
      origin,
      basePath: '',
    });

  it.each([
    ['http://localhost:8080', 'http://127.0.0.1:8080'],
    ['http://localhost:8080', 'http://[::1]:8080'],
    ['http://127.0.0.1:8080', 'http://localhost:8080'],
    ['http://127.0.0.1:8080', 'http://[::1]:8080'],
    ['http://[::1]:8080', 'http://127.0.0.1:8080'],
    ['http://[::1]:8080', 'http://LOCALHOST:8080'],
    ['http://localhost', 'http://127.0.0.1:80'],
  ])('service %s: a reference to %s is the service', (origin, other) => {
    expect(resolve(origin, other)).toMatchObject({ kind: 'service', source: asset, request: `${asset}?v=1` });
  });

  it.each([
    ['http://localhost:8080', 'http://127.0.0.1:8081'],
    ['http://localhost:8080', 'https://127.0.0.1:8080'],
    ['http://localhost:8080', 'http://127.0.0.2:8080'],
    ['http://localhost:8080', 'http://localhost.example:8080'],
    ['http://pidoco.example:8080', 'http://127.0.0.1:8080'],
  ])('service %s: a reference to %s is another host', (origin, other) => {
    expect(resolve(origin, other)).toEqual({ kind: 'foreign', url: new URL(`${other}${asset}?v=1`).href });
  });
});

describe('rewriting', () => {
  it('splices replacements and leaves every other byte alone', () => {
    const html = latin1('<p>Ünïcödé 🐇</p><img src="/a.png"><img src="/b.png">');
    const refs = scanHtml(html);
    const out = applyReplacements(
      html,
      refs.map((r, i) => ({ start: r.start, end: r.end, text: `x${i}.png` })),
    );
    expect(Buffer.from(out, 'latin1').toString('utf8')).toBe('<p>Ünïcödé 🐇</p><img src="x0.png"><img src="x1.png">');
  });

  it.each([
    ['prototypes/3/r6/pages/page1.view.html', 'assets/ab.png', '../../../../assets/ab.png'],
    ['assets/x.view.css', 'assets/y.png', 'y.png'],
    ['prototypes/3/r6/pages/page1.view.html', 'prototypes/3/r6/pages/page2.view.html', 'page2.view.html'],
    ['index.html', 'prototypes/3/r6/pages/page1.png', 'prototypes/3/r6/pages/page1.png'],
  ])('relativeEntryUrl(%s, %s) is %s', (from, to, expected) => {
    expect(relativeEntryUrl(from, to)).toBe(expected);
  });

  it('refuses unsafe entry names', () => {
    expect(() => relativeEntryUrl('a/b.html', '../etc/passwd')).toThrow(expect.objectContaining({ code: 'BAD_ID' }));
  });
});

describe('asset names', () => {
  it.each([
    ['text/css; charset=utf-8', 'css'],
    ['IMAGE/PNG', 'png'],
    ['image/svg+xml', 'svg'],
    ['text/html', 'bin'],
    ['application/javascript', 'bin'],
    ['', 'bin'],
  ])('%s gives .%s', (type, ext) => {
    expect(extensionFor(type)).toBe(ext);
  });

  it('are content-addressed and always safe', () => {
    const sha = 'a'.repeat(64);
    expect(assetPath(sha, 'image/png')).toBe(`assets/${sha}.png`);
    expect(isSafeEntryName(assetPath(sha, 'text/html; x=../..'))).toBe(true);
    expect(() => assetPath('../../etc/passwd', 'image/png')).toThrow(expect.objectContaining({ code: 'BAD_ID' }));
  });
});
