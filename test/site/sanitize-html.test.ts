import { parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { describe, expect, it } from 'vitest';
import type { StoredFile } from '../../src/storage/stored-file.js';
import { viewRewrite } from '../../src/site/page-views.js';
import { pageView } from '../../src/site/view-build.js';
import { keepsAttribute, sanitizeDocument } from '../../src/site/sanitize-html.js';
import { schemeOf } from '../../src/site/view-urls.js';
import { VIEW_CSP } from '../../src/site/view-policy.js';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

const isElement = (node: Node): node is Element => 'tagName' in node;

/** Every element of a tree, template contents included, in document order. */
function elements(node: Node): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    if (isElement(n)) out.push(n);
    if (isElement(n) && n.tagName === 'template') walk((n as DefaultTreeAdapterTypes.Template).content);
    if ('childNodes' in n) n.childNodes.forEach(walk);
  };
  walk(node);
  return out;
}

// eslint-disable-next-line no-control-regex
const LEADING = /^[\u0000-\u0020]+/;

const ACTING_ELEMENTS = ['script', 'iframe', 'frame', 'object', 'embed', 'applet', 'portal', 'base', 'noscript'];

/**
 * What a browser would find actionable in `html` read as a document, by an independent reading:
 * script-like elements, handlers, refreshes and a `javascript:`/`vbscript:` URL anywhere.
 */
function actionable(html: string): string[] {
  const found: string[] = [];
  const all = elements(parse(html));
  for (const el of all) {
    const tag = el.tagName.toLowerCase();
    if (ACTING_ELEMENTS.includes(tag) || tag === 'animate' || tag === 'set') found.push(`<${tag}>`);
    for (const attr of el.attrs) {
      const name = (attr.prefix ? `${attr.prefix}:${attr.name}` : attr.name).toLowerCase();
      // Browsers drop tabs and newlines anywhere in a URL and spaces or controls before it.
      const url = attr.value
        .replace(/[\t\n\r]/g, '')
        .replace(LEADING, '')
        .toLowerCase();
      if (name.startsWith('on')) found.push(`${tag}[${name}]`);
      if (/^(?:javascript|vbscript):/.test(url)) found.push(`${tag}[${name}=script URL]`);
      if (['action', 'formaction', 'srcdoc', 'ping'].includes(name)) found.push(`${tag}[${name}]`);
      if (['href', 'xlink:href', 'action'].includes(name) && url.startsWith('data:') && tag !== 'link')
        found.push(`${tag}[${name}=data:]`);
    }
    const rel = el.attrs.find((a) => a.name === 'rel')?.value.toLowerCase() ?? '';
    if (tag === 'link' && !/^(?:stylesheet|icon|shortcut icon)$/.test(rel)) found.push(`link[rel=${rel}]`);
    if (tag === 'meta') {
      const equiv = el.attrs.find((a) => a.name === 'http-equiv')?.value.toLowerCase();
      const content = el.attrs.find((a) => a.name === 'content')?.value ?? '';
      if (equiv !== undefined && equiv !== 'content-security-policy' && equiv !== 'x-dns-prefetch-control')
        found.push(`meta[http-equiv=${equiv}]`);
      if (equiv === 'content-security-policy' && content !== VIEW_CSP) found.push('a foreign policy');
    }
  }
  return found;
}

/** The head's first elements must be the view's own charset and policy, whatever the source did. */
function headStart(html: string): string[] {
  const head = elements(parse(html)).find((e) => e.tagName === 'head') as Element;
  return head.childNodes
    .filter(isElement)
    .slice(0, 2)
    .map((e) => e.attrs.map((a) => `${a.name}=${a.value}`).join(' '));
}

const CASES: [string, string, string?][] = [
  [
    'a script before <head>',
    `<script>document.title='x'</script><html><head><title>t</title></head><body>ok</body></html>`,
  ],
  ['a <head> in a comment', `<!-- <head> --><html><head><script>alert(1)</script></head><body>ok</body></html>`],
  ['no head at all', `<body onload="alert(1)">ok</body>`],
  ['a meta refresh', `<head><meta http-equiv="refresh" content="0;url=http://elsewhere/"></head><body>ok</body>`],
  ['a meta refresh in the body', `<body>ok<meta http-equiv="Refresh" content="0;url=http://elsewhere/"></body>`],
  ['a set-cookie meta', `<head><meta http-equiv="Set-Cookie" content="a=b"></head><body>ok</body>`],
  [
    'a policy of its own',
    `<head><meta http-equiv="Content-Security-Policy" content="script-src *"></head><body>ok</body>`,
  ],
  ['img onerror', `<img src="x" onerror="alert(1)">ok`, 'img'],
  ['upper-case handler', `<div OnMouseOver="alert(1)">ok</div>`],
  ['entity-split javascript: link', `<a href="jav&#x09;ascript:alert(1)">ok</a>`, 'a'],
  ['newline-split javascript: link', `<a href="java\nscript:alert(1)">ok</a>`, 'a'],
  ['leading spaces and case', `<a href="  \u0001JaVaScRiPt:alert(1)">ok</a>`, 'a'],
  ['encoded colon', `<a href="javascript&colon;alert(1)">ok</a>`, 'a'],
  ['vbscript:', `<a href="vbscript:msgbox(1)">ok</a>`, 'a'],
  ['data: navigation', `<a href="data:text/html,<script>alert(1)</script>">ok</a>`, 'a'],
  ['iframe srcdoc', `<iframe srcdoc="<script>alert(1)</script>"></iframe>ok`],
  ['frameset', `<frameset><frame src="javascript:alert(1)"></frameset>`],
  ['object', `<object data="http://elsewhere/x.swf"></object><embed src="x.swf"><applet code="x"></applet>ok`],
  ['portal', `<portal src="http://elsewhere/"></portal>ok`],
  ['base href', `<head><base href="http://elsewhere/"></head><body><a href="next.html">ok</a></body>`],
  ['svg script', `<svg><script>alert(1)</script><script href="data:,alert(1)"></script></svg>ok`],
  ['svg xlink javascript', `<svg><a xlink:href="javascript:alert(1)"><text>ok</text></a></svg>`],
  [
    'svg animate to javascript',
    `<svg><a><animate attributeName="href" to="javascript:alert(1)"/><text>ok</text></a></svg>`,
  ],
  ['svg set', `<svg><set attributeName="onload" to="alert(1)"/></svg>ok`],
  ['math href', `<math href="javascript:alert(1)"><mi>ok</mi></math>`],
  ['form action', `<form action="http://elsewhere/"><button formaction="http://elsewhere/">ok</button></form>`],
  ['template shadow root', `<div><template shadowrootmode="open"><img src=x onerror=alert(1)>ok</template></div>`],
  ['noscript mutation', `<noscript><p title="</noscript><img src=x onerror=alert(1)>">ok`],
  ['svg style breakout', `<svg><style><img src=x onerror=alert(1)></style></svg>ok`],
  [
    'prefetch to elsewhere',
    `<head><link rel="prefetch" href="http://elsewhere/"><link rel="dns-prefetch" href="//elsewhere"></head>ok`,
  ],
  ['a javascript: image', `<img src="javascript:alert(1)">ok`],
];

describe('sanitizeDocument', () => {
  it.each(CASES)('%s: nothing actionable left, the policy first in the head', (_name, input) => {
    const out = sanitizeDocument(input, VIEW_CSP);
    // Hostile as written, or once a serializer and a browser's second parse have had it (mutation XSS).
    expect([...actionable(input), ...actionable(serialize(parse(input)))], 'the case is hostile').not.toEqual([]);
    expect(actionable(out)).toEqual([]);
    expect(headStart(out)).toEqual(['charset=utf-8', `http-equiv=Content-Security-Policy content=${VIEW_CSP}`]);
    // Stable: a browser reading the view reads what was checked.
    expect(sanitizeDocument(out, VIEW_CSP)).toBe(out);
  });

  it('keeps what the page draws with: text, styles, images, links to pages', () => {
    const out = sanitizeDocument(
      `<html><head><title>Page</title><link rel="stylesheet" href="a.css"><style>.a{color:red}</style></head>` +
        `<body><div class="a" style="left:1px">Text &amp; more</div><img src="b.png" srcset="b.png 1x, c.png 2x" alt="">` +
        `<a href="page2.html">next</a><a href="https://example.com/">out</a><img src="data:image/png;base64,AAAA"></body></html>`,
      VIEW_CSP,
    );
    for (const kept of [
      '<title>Page</title>',
      '<link rel="stylesheet" href="a.css">',
      '<style>.a{color:red}</style>',
      '<div class="a" style="left:1px">Text &amp; more</div>',
      '<img src="b.png" srcset="b.png 1x, c.png 2x" alt="">',
      '<a href="page2.html">next</a>',
      '<a href="https://example.com/">out</a>',
      '<img src="data:image/png;base64,AAAA">',
    ])
      expect(out).toContain(kept);
  });
});

describe('pageView', () => {
  it('rewrites references on the tree: attributes, srcset, style url(), and makes what the rewrite declines inert', () => {
    const out = pageView(
      `<html><head><link rel="stylesheet" href="/s.css"></head><body style="background:url('/bg.png')">` +
        `<img src="/a.png" srcset="/a.png 1x, http://elsewhere/b.png 2x"><a href="/p2.html">p2</a>` +
        `<a href="http://elsewhere/">away</a><a href="#top">top</a><style>@import "http://elsewhere/x.css"; .x{background:url(/bg.png)}</style></body></html>`,
      (value, kind) => {
        if (value.startsWith('#')) return value;
        if (value.startsWith('http://elsewhere')) return kind === 'link' ? 'https://elsewhere.example/' : undefined;
        return kind === 'link' ? `view${value}` : `archive${value}`;
      },
      'page.view.html',
    );
    expect(out.startsWith('\ufeff')).toBe(true);
    for (const part of [
      '<link rel="stylesheet" href="archive/s.css">',
      'style="background:url(&quot;archive/bg.png&quot;)"',
      '<img src="archive/a.png" srcset="archive/a.png 1x">',
      '<a href="view/p2.html">p2</a>',
      '<a href="https://elsewhere.example/">away</a>',
      '<a href="#top">top</a>',
      '@import "data:,"; .x{background:url("archive/bg.png")}',
    ])
      expect(out).toContain(part);
  });
});

describe('keepsAttribute and schemeOf', () => {
  it.each([
    ['a', 'href', 'page.html', true],
    ['a', 'href', 'https://example.com/', true],
    ['a', 'href', 'mailto:a@example.com', true],
    ['a', 'href', '\u2028javascript:alert(1)', false],
    ['a', 'href', 'data:text/html,x', false],
    ['img', 'src', 'data:image/png;base64,AA', true],
    ['img', 'src', 'blob:x', false],
    ['a', 'href', 'file:///etc/passwd', false],
    ['div', 'title', 'javascript:alert(1)', false],
    ['div', 'onclick', 'x', false],
    ['div', 'title', 'a javascript: talk', false],
    ['div', 'title', 'plain', true],
  ])('<%s %s="%s"> kept: %s', (tag, name, value, kept) => {
    expect(keepsAttribute(tag, { name, value })).toBe(kept);
  });

  it.each([
    ['JaVaScRiPt:x', 'javascript'],
    [' \t java\nscript:x', 'javascript'],
    ['page.html', undefined],
    ['./a:b', undefined],
  ])('%j has scheme %s', (value, scheme) => {
    expect(schemeOf(value)).toBe(scheme);
  });
});

/**
 * One page's view as the export makes it: page1 of prototype 3 served by service.example, with a
 * sibling page2, an archived PNG, an archived SVG (a document a browser would run), a stylesheet
 * copy and a raw sheet.
 */
const SERVICE = { origin: 'https://service.example', basePath: '' };
const VIEW = 'prototypes/3/r6/pages/page1.view.html';
const SVG_ASSET = 'assets/5f1e.svg';
const asset = (path: string): StoredFile => ({ path }) as StoredFile;
const REWRITE = viewRewrite(VIEW, 'https://service.example/rabbit/api/prototypes/3/pages/page1.html', SERVICE, {
  pages: new Map([
    ['/rabbit/api/prototypes/3/pages/page1.html', VIEW],
    ['/rabbit/api/prototypes/3/pages/page2.html', 'prototypes/3/r6/pages/page2.view.html'],
  ]),
  sheets: new Map([['/static/s.css', 'assets/77aa.view.css']]),
  catalog: {
    assets: new Map([
      ['/static/a.png', asset('assets/0a0a.png')],
      ['/static/evil.svg', asset(SVG_ASSET)],
      ['/static/s.css', asset('assets/77aa.css')],
    ]),
    archived: new Map(),
    foreign: new Map(),
  },
});
const H = '//attacker.example/share';

/** Every URL a view's attributes hold, by an independent reading of the serialized view. */
function attributeUrls(html: string): { tag: string; name: string; value: string }[] {
  const names = ['href', 'xlink:href', 'src', 'srcset', 'poster', 'background', 'data', 'action', 'formaction'];
  return elements(parse(html)).flatMap((el) =>
    el.attrs
      .map((a) => ({
        tag: el.tagName,
        name: (a.prefix ? `${a.prefix}:${a.name}` : a.name).toLowerCase(),
        value: a.value,
      }))
      .filter((a) => names.includes(a.name)),
  );
}

describe('a view leaves no reference as written', () => {
  it.each([
    ['a style url(file://host)', `<div style="background:url(file://attacker.example/share/a.png)">x</div>`],
    ['image-set() with a string', `<div style="background-image:image-set('${H}/is.png' 1x)">x</div>`],
    ['an escaped url(', `<div style="background:\\75 rl(${H}/esc.png)">x</div>`],
    [
      '<style> with -webkit-image-set and an escaped @import',
      `<style>@\\69mport "${H}/i.css"; b{background:-webkit-image-set("${H}/w.png" 1x)}</style>`,
    ],
    [
      '<feImage href=//host>',
      `<svg><filter id="f"><feImage href="${H}/fe.png"/></filter><rect filter="url(#f)" width="9" height="9"/></svg>`,
    ],
    ['<use href=//host>', `<svg><use href="${H}/u.svg#a"/><use xlink:href="${H}/u2.svg#a"/></svg>`],
    [
      'fill="url(//host)"',
      `<svg><rect fill="url(${H}/p.svg#p)" stroke="\\75 rl(${H}/s.svg#p)" width="9" height="9"/></svg>`,
    ],
    [
      'img, srcset, poster, background to //host',
      `<img src="${H}/i.png" srcset="${H}/1.png 1x, ${H}/2.png 2x"><video poster="${H}/p.png"></video><table background="${H}/t.png"></table>`,
    ],
    [
      'a data: stylesheet importing',
      `<link rel="stylesheet" href="data:text/css,@import 'http://attacker.example/x.css';">`,
    ],
    ['a file: link', `<a href="file://attacker.example/share/doc.html">x</a>`],
    [
      'attributionsrc',
      `<a href="page2.html" attributionsrc="${H}/a">x</a><img src="/static/a.png" attributionsrc="${H}/b">`,
    ],
  ])('%s: nothing reaches another host or file://', (_name, body) => {
    const out = pageView(`<!DOCTYPE html><title>t</title><body>${body}</body>`, REWRITE, VIEW);
    expect(out).not.toMatch(/attacker|file:/i);
  });

  it.each([
    ['a percent-escaped link to the page itself', `<a href="page1.%68tml">x</a>`, 'page1.view.html'],
    ['a percent-escaped link to a sibling', `<a href="pag%65%32.html#top">x</a>`, 'page2.view.html#top'],
    ['an archive path to the raw page', `<a href="../../r6/pages/page1.html">x</a>`, undefined],
    ['an archive path to an archived SVG', `<a href="../../../../${SVG_ASSET}">x</a>`, undefined],
    ['a link to the SVG on the service', `<a href="/static/evil.svg">x</a>`, undefined],
    ['an area to the raw stylesheet', `<map><area href="/static/s.css"></map>`, undefined],
    [
      'an SVG link to the raw page',
      `<svg><a xlink:href="../../r6/pages/page1.html"><text>x</text></a></svg>`,
      undefined,
    ],
    ['a service link with no page', `<a href="https://service.example/rabbit/api/prototypes.json">x</a>`, undefined],
    ['a link to another host', `<a href="http://elsewhere.example/a">x</a>`, 'http://elsewhere.example/a'],
    [
      'a link to //host: no file:// share, a web address clicked deliberately',
      `<a href="${H}/doc.html">x</a>`,
      'https://attacker.example/share/doc.html',
    ],
    ['a mail address', `<a href="mailto:a@example.com">x</a>`, 'mailto:a@example.com'],
    ['a place in the page', `<a href="#top">x</a>`, '#top'],
  ])('%s: the link goes to a view, another host, or nowhere', (_name, body, href) => {
    const out = pageView(`<!DOCTYPE html><title>t</title><body>${body}</body>`, REWRITE, VIEW);
    const links = attributeUrls(out).filter((a) => a.tag === 'a' || a.tag === 'area');
    expect(links.map((a) => a.value)).toEqual(href === undefined ? [] : [href]);
  });

  it('keeps what the archive holds: images, the stylesheet copy, a drawn data: image', () => {
    const out = pageView(
      `<!DOCTYPE html><link rel="stylesheet" href="/static/s.css"><body style="background:url(/static/a.png)"><img src="/static/a.png"><img src="/static/evil.svg"><img src="data:image/png;base64,AAAA"><svg><use href="#a"/></svg></body>`,
      REWRITE,
      VIEW,
    );
    expect(attributeUrls(out).map((a) => `${a.tag} ${a.name}=${a.value}`)).toEqual([
      'link href=../../../../assets/77aa.view.css',
      'img src=../../../../assets/0a0a.png',
      `img src=../../../../${SVG_ASSET}`,
      'img src=data:image/png;base64,AAAA',
      'use href=#a',
    ]);
    expect(out).toContain('style="background:url(&quot;../../../../assets/0a0a.png&quot;)"');
  });
});
