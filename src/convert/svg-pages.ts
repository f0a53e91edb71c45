import { discussionLines, textSource, type PageContent } from './page-walk.js';
import { pageFileOf, uniqueIds, type UniqueId } from './page-names.js';
import type { DiscussionData, ElementData } from './prototype-data.js';
import { raw, XmlBuilder, type XmlNode } from './xml-element.js';
import type { XmlText } from './xml-text.js';

/**
 * One standalone SVG per page, for editors that import SVG as editable layers (Inkscape, Figma,
 * Penpot, draw.io). Bottom to top: the rendering (a data: URI, so the file needs nothing beside it;
 * a locked Inkscape layer), the layers the page shows, the page's own elements, the discussions.
 * Each element is a group of a `<rect>` at its geometry and its label as `<text>`, carrying its
 * archived JSON in `data-element`; an element that targets another page is wrapped in `<a>` to that
 * page's file.
 */
export interface SvgPageStats {
  shapes: number;
  links: number;
  danglingTargets: { elementId: string; target: string }[];
}

export const SVG_LAYER_IDS = { rendering: 'rendering', own: 'page-elements', discussions: 'discussions' } as const;

export function svgFileOf(number: number, pageId: string): string {
  return pageFileOf(number, pageId, 'svg');
}

export function svgPage(
  content: PageContent,
  fileOfPage: ReadonlyMap<string, string>,
  text: XmlText,
): { xml: string; stats: SvgPageStats } {
  const x = new XmlBuilder(text);
  const stats: SvgPageStats = { shapes: 0, links: 0, danglingTargets: [] };
  const pageName: [string, string] = [content.page.name, textSource.page(content.page)];
  const uniqueId = uniqueIds(Object.values(SVG_LAYER_IDS));
  const body: XmlNode[] = [raw('\n'), ...line(x.element('title', [], [x.content(...pageName)]))];
  if (content.png !== undefined) body.push(...line(renderingLayer(x, content, content.png)));
  const elements = (list: readonly ElementData[]): XmlNode[] =>
    list.map((element) => elementSvg(x, element, uniqueId, fileOfPage, stats, text));
  // In this order, for ids made unique in it: each shown layer's own, then its elements'.
  for (const shown of content.layers) {
    const id = uniqueId(`layer-${shown.id}`);
    body.push(...line(layer(x, id, [shown.name, textSource.layer(shown)], elements(shown.elements))));
  }
  body.push(...line(layer(x, SVG_LAYER_IDS.own, pageName, elements(content.elements))));
  if (content.discussions.length > 0) {
    const marks = content.discussions.map((discussion) => discussionMark(x, discussion, uniqueId));
    body.push(...line(layer(x, SVG_LAYER_IDS.discussions, ['Discussions'], marks)));
  }
  const { width, height } = content.size;
  const svg = x.element(
    'svg',
    [
      ['xmlns', 'http://www.w3.org/2000/svg'],
      ['xmlns:xlink', 'http://www.w3.org/1999/xlink'],
      ['xmlns:inkscape', 'http://www.inkscape.org/namespaces/inkscape'],
      ['xmlns:sodipodi', 'http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd'],
      ['width', width],
      ['height', height],
      ['viewBox', `0 0 ${width} ${height}`],
    ],
    body,
  );
  return { xml: `<?xml version="1.0" encoding="UTF-8"?>\n${svg.xml}\n`, stats };
}

/** A node on a line of its own, indented, for files a person may read. */
function line(node: XmlNode, indent = '  '): XmlNode[] {
  return [raw(indent), node, raw('\n')];
}

/** An Inkscape layer of these children. */
function layer(x: XmlBuilder, id: string, label: [string, string?], children: XmlNode[]): XmlNode {
  const attrs = [
    ['id', id],
    ['inkscape:groupmode', 'layer'],
    ['inkscape:label', ...label],
  ] as const;
  return x.element('g', attrs, [raw('\n'), ...children.flatMap((child) => line(child, '    ')), raw('  ')]);
}

/** The page's rendering as a data: URI on the canvas, in a locked layer at the bottom. */
function renderingLayer(x: XmlBuilder, content: PageContent, png: Buffer): XmlNode {
  const href = `data:image/png;base64,${png.toString('base64')}`;
  const box = content.canvas ?? { x: 0, y: 0, width: content.size.width, height: content.size.height };
  const image = x.element('image', [
    ['x', box.x],
    ['y', box.y],
    ['width', box.width],
    ['height', box.height],
    ['preserveAspectRatio', 'none'],
    ['href', href],
    ['xlink:href', href],
  ]);
  return x.element(
    'g',
    [
      ['id', SVG_LAYER_IDS.rendering],
      ['inkscape:groupmode', 'layer'],
      ['inkscape:label', 'rendering'],
      ['sodipodi:insensitive', 'true'],
    ],
    [raw('\n'), ...line(image, '    '), raw('  ')],
  );
}

/** A discussion as a yellow mark at its place, its thread in the tooltip. */
function discussionMark(x: XmlBuilder, discussion: DiscussionData, uniqueId: UniqueId): XmlNode {
  return x.element(
    'g',
    [
      ['id', uniqueId(`discussion-${discussion.id}`)],
      ['class', 'discussion'],
    ],
    [
      x.element('title', [], [x.content(discussionLines(discussion).join('\n'))]),
      x.element('circle', [
        ['cx', discussion.x],
        ['cy', discussion.y],
        ['r', 9],
        ['fill', '#ffd966'],
        ['stroke', '#b8860b'],
        ['stroke-width', 1.5],
      ]),
      x.element(
        'text',
        [
          ['x', discussion.x],
          ['y', discussion.y + 4],
          ['text-anchor', 'middle'],
          ['font-family', 'sans-serif'],
          ['font-size', 11],
          ['fill', '#5a4000'],
        ],
        [x.content('!')],
      ),
    ],
  );
}

const LINE_HEIGHT = 1.2;

function elementSvg(
  x: XmlBuilder,
  element: ElementData,
  uniqueId: UniqueId,
  fileOfPage: ReadonlyMap<string, string>,
  stats: SvgPageStats,
  text: XmlText,
): XmlNode {
  const { box } = element;
  const parts = [
    x.element('rect', [
      ['x', box.x],
      ['y', box.y],
      ['width', box.width],
      ['height', box.height],
      ['fill', '#ffffff'],
      ['fill-opacity', 0],
      ['stroke', '#3d7bd9'],
      ['stroke-opacity', 0.7],
      ['stroke-width', 1],
    ]),
  ];
  // Cleaned once for the tooltip and the lines alike, so its dropped characters count once.
  const label =
    element.text !== null
      ? text.clean(element.text, textSource.element(element, 'text'))
      : text.clean(element.type, textSource.element(element, 'type'));
  if (element.text !== null && element.text !== '') parts.push(labelText(x, box, label.split(/\r\n|\r|\n/)));
  stats.shapes++;
  const group = x.element(
    'g',
    [
      ['id', uniqueId(element.id)],
      ['class', 'element'],
      ['data-type', element.type, textSource.element(element, 'type')],
      ['data-element', { json: element.raw }, textSource.element(element, 'json')],
    ],
    [x.element('title', [], [x.content(label)]), ...parts],
  );
  if (element.target === null) return group;
  const file = fileOfPage.get(element.target);
  if (file === undefined) {
    stats.danglingTargets.push({ elementId: element.id, target: element.target });
    return group;
  }
  stats.links++;
  return x.element(
    'a',
    [
      ['href', file],
      ['xlink:href', file],
    ],
    [group],
  );
}

/** An element's label, a `<tspan>` a line, sized to its box like the service's labels. */
function labelText(x: XmlBuilder, box: ElementData['box'], lines: string[]): XmlNode {
  // A sans-serif glyph is about 0.55 em wide.
  const longest = Math.max(...lines.map((line) => [...line].length), 1);
  const size = Math.max(4, Math.min(14, box.height / lines.length / LINE_HEIGHT, (box.width - 6) / (longest * 0.55)));
  const tspans = lines.map((line, index) =>
    x.element(
      'tspan',
      [
        ['x', box.x + 3],
        ['y', box.y + size * (index * LINE_HEIGHT + 1)],
      ],
      [x.content(line)],
    ),
  );
  return x.element(
    'text',
    [
      ['xml:space', 'preserve'],
      ['font-family', 'sans-serif'],
      ['font-size', size.toFixed(2)],
      ['fill', '#1a1a1a'],
    ],
    tspans,
  );
}
