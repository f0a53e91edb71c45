import { describe, expect, it } from 'vitest';
import { diagramXml } from '../../src/convert/drawio-xml.js';
import type { PageContent, PagePlan, PrototypeHead } from '../../src/convert/page-walk.js';
import { pdfBinder } from '../../src/convert/pdf-binder.js';
import type { DiscussionData, ElementData, LayerData, PageMeta } from '../../src/convert/prototype-data.js';
import { svgFileOf, svgPage } from '../../src/convert/svg-pages.js';
import { XmlText } from '../../src/convert/xml-text.js';

/**
 * A character XML cannot hold is dropped wherever its text is written, but counted once for the
 * text it came from: a page name written as the diagram's name and its layer's, an element's text
 * as its tooltip and its lines, a layer shown on two pages, a discussion's title in its note.
 */
function elementOf(entry: string, text: string): ElementData {
  const id = /(element\d+)\.json$/.exec(entry)?.[1] as string;
  return {
    id,
    entry,
    raw: JSON.stringify({ id, type: 'button', text }),
    type: 'button',
    box: { x: 10, y: 10, width: 120, height: 40 },
    text,
    target: null,
    style: undefined,
  };
}

// One dropped character in each text, two in the page's own element: 7 in all.
const layer: LayerData = {
  id: 'layer1',
  name: 'Header\uFFFE',
  elements: [elementOf('layers/layer1/elements/element1.json', 'Logo\u0001')],
};
const pages: PageMeta[] = [
  { id: 'page1', name: 'Start\u0001', layerIds: ['layer1'] },
  { id: 'page2', name: 'Next', layerIds: ['layer1'] },
];
const discussion: DiscussionData = {
  id: '1',
  raw: '{}',
  pageId: 'page1',
  title: 'Why\u0001',
  x: 5,
  y: 5,
  entries: [{ author: 'Ann', timestamp: 0, text: 'because\uFFFE' }],
};
const contents: PageContent[] = pages.map((page, index) => ({
  page,
  number: index + 1,
  size: { width: 200, height: 100 },
  png: undefined,
  layers: [layer],
  elements: index === 0 ? [elementOf('pages/page1/elements/element2.json', 'a\u0001b\nc\uFFFEd')] : [],
  discussions: index === 0 ? [discussion] : [],
}));
const pageIds = new Set(pages.map((page) => page.id));

describe('dropped characters are counted once per text they come from', () => {
  it('draw.io', () => {
    const text = new XmlText();
    for (const content of contents) diagramXml({ ...content, pageIds }, text);
    expect(text.dropped).toBe(7);
  });

  it('SVG', () => {
    const text = new XmlText();
    const files = new Map(pages.map((page, index) => [page.id, svgFileOf(index + 1, page.id)]));
    for (const content of contents) svgPage(content, files, text);
    expect(text.dropped).toBe(7);
  });

  it('PDF, which writes no layer names', async () => {
    const text = new XmlText();
    const head: PrototypeHead = {
      id: '3',
      name: 'Foo',
      revision: 1,
      lastModification: null,
      lastUser: null,
      milestones: [],
    };
    const plan: PagePlan = { pages, pageIds, discussions: new Map([['page1', [discussion]]]) };
    await pdfBinder(
      head,
      plan,
      (async function* () {
        yield* contents;
      })(),
      text,
    );
    expect(text.dropped).toBe(6);
  });
});
