import { parse, type DefaultTreeAdapterTypes } from 'parse5';
import { describe, expect, it } from 'vitest';
import type { PrototypeSummary } from '../../src/site/archive-data.js';
import { renderIndex, renderPrototypePage } from '../../src/site/index-html.js';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

const isElement = (node: Node): node is Element => 'tagName' in node;

function elements(node: Node): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    if (isElement(n)) out.push(n);
    if ('childNodes' in n) n.childNodes.forEach(walk);
  };
  walk(node);
  return out;
}

function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterTypes.TextNode).value;
  return 'childNodes' in node ? node.childNodes.map(textOf).join('') : '';
}

/** Service text that would be markup, an attribute's end or a script's end if written as it came. */
const HOSTILE = [
  '<i>beta</i>',
  `"><img src=x onerror=alert(1)>`,
  `' onmouseover='alert(1)`,
  '</script><script>alert(1)</script>',
  '</title><script>alert(1)</script>',
  '</style><script>alert(1)</script>',
  '<!-- unclosed',
  '&amp; &lt; already escaped',
];

function summary(name: string): PrototypeSummary {
  const discussion = { id: '5', title: name, x: 10, y: 20, entries: [{ author: name, timestamp: 0, text: name }] };
  return {
    id: '3',
    revision: name,
    name,
    lastModification: 0,
    lastUser: name,
    milestones: [{ revision: 1, name, created: 0, user: name }],
    pages: [
      {
        id: 'page1',
        name,
        layerNames: [name],
        elementCount: 1,
        png: { path: 'prototypes/3/r1/pages/page1.png', width: 100, height: 100 },
        open: 'prototypes/3/r1/pages/page1.view.html',
        discussions: [discussion],
      },
    ],
    layers: [{ id: 'layer1', name, elementCount: 2 }],
    otherDiscussions: [],
    complete: true,
  };
}

describe('the overview pages escape every service value', () => {
  it.each(HOSTILE)('%s stays text in index.html', (name) => {
    const html = renderIndex({
      baseUrl: `http://example.com/${name}`,
      prototypes: [{ id: '3', name, revision: name, complete: true, pages: 1 }],
      errors: [{ source: `/rabbit/api/${name}`, message: name, code: 'HTTP_STATUS', attempts: 1 }],
      errorCount: 1,
    });
    const document = parse(html);
    const all = elements(document);
    expect(all.filter((e) => ['script', 'img', 'i', 'iframe'].includes(e.tagName))).toEqual([]);
    expect(all.flatMap((e) => e.attrs.filter((a) => a.name.startsWith('on')))).toEqual([]);
    const title = all.find((e) => e.tagName === 'title') as Element;
    expect(textOf(title)).toBe(`Rabbit archive – http://example.com/${name}`);
    const link = all.find((e) => e.tagName === 'a' && e.attrs.some((a) => a.value === 'overview/prototype-3.html'));
    expect(textOf(link as Element)).toBe(`no image archived${name}`);
    expect(all.filter((e) => e.tagName === 'style').length).toBe(1);
  });

  it.each(HOSTILE)('%s stays text in a prototype page', (name) => {
    const html = renderPrototypePage(summary(name), 'http://example.com/');
    const all = elements(parse(html));
    expect(all.filter((e) => ['script', 'i', 'iframe'].includes(e.tagName))).toEqual([]);
    // The one image is the page's own: the name is only its alt text.
    expect(all.filter((e) => e.tagName === 'img').map((e) => e.attrs)).toEqual([
      [
        { name: 'src', value: '../prototypes/3/r1/pages/page1.png' },
        { name: 'width', value: '100' },
        { name: 'height', value: '100' },
        { name: 'alt', value: name },
      ],
    ]);
    expect(all.flatMap((e) => e.attrs.filter((a) => a.name.startsWith('on')))).toEqual([]);
    expect(textOf(all.find((e) => e.tagName === 'h2') as Element)).toBe(name);
    expect(textOf(all.find((e) => e.tagName === 'title') as Element)).toBe(`${name} – Rabbit archive`);
    const marker = all.find((e) => e.attrs.some((a) => a.name === 'class' && a.value === 'marker'));
    expect(marker?.attrs.find((a) => a.name === 'title')?.value).toBe(name);
  });
});
