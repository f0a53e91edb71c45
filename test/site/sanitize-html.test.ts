import { parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { describe, expect, it } from 'vitest';
import { pageView } from '../../src/site/page-views.js';
import { keepsAttribute, sanitizeDocument, schemeOf } from '../../src/site/sanitize-html.js';
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
  it('rewrites references on the tree: attributes, srcset, style url(), and leaves foreign ones inert', () => {
    const out = pageView(
      `<html><head><link rel="stylesheet" href="/s.css"></head><body style="background:url('/bg.png')">` +
        `<img src="/a.png" srcset="/a.png 1x, http://elsewhere/b.png 2x"><a href="/p2.html">p2</a>` +
        `<a href="http://elsewhere/">away</a><style>@import "http://elsewhere/x.css"; .x{background:url(/bg.png)}</style></body></html>`,
      (value, kind) => {
        if (value.startsWith('http://elsewhere')) return kind === 'link' ? undefined : 'data:,';
        return kind === 'link' ? `view${value}` : `archive${value}`;
      },
    );
    expect(out.startsWith('\ufeff')).toBe(true);
    for (const part of [
      '<link rel="stylesheet" href="archive/s.css">',
      `style="background:url('archive/bg.png')"`,
      '<img src="archive/a.png" srcset="archive/a.png 1x, data:, 2x">',
      '<a href="view/p2.html">p2</a>',
      '<a href="http://elsewhere/">away</a>',
      '@import "data:,"; .x{background:url(archive/bg.png)}',
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
