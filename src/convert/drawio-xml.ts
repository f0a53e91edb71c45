import { drawioStyleOf } from './element-style.js';
import { discussionLines, textSource } from './page-walk.js';
import type { DiscussionData, ElementData, LayerData, PageMeta } from './prototype-data.js';
import { uniqueIds, type UniqueId } from './page-names.js';
import { addCount } from './report.js';
import { shapeFor } from './shape-table.js';
import { endTag, raw, XmlBuilder, type XmlAttr, type XmlNode } from './xml-element.js';
import type { XmlText } from './xml-text.js';

/**
 * The draw.io file format (an uncompressed `<mxfile>`, one `<diagram>` per page) written as text.
 * Layers are the children of cell 0, bottom first: the rendering, the layers the page shows, the
 * page's own elements, then the hidden discussions. Every element is an `<object>` so it can carry
 * `rabbitId` and `rabbitJson` next to its label.
 */
export interface DiagramInput {
  page: PageMeta;
  size: { width: number; height: number };
  /** Where the rendering sits on the page (page-walk.ts); the whole page when not given. */
  canvas?: { x: number; y: number; width: number; height: number };
  /** The page's PNG; undefined leaves the Rendering layer out. */
  png: Buffer | undefined;
  layers: readonly LayerData[];
  elements: readonly ElementData[];
  discussions: readonly DiscussionData[];
  /** Diagram ids of the prototype's pages, for links. */
  pageIds: ReadonlySet<string>;
}

export interface DiagramStats {
  shapes: number;
  links: number;
  /** Types the table does not know, drawn as a labelled rectangle, with counts. */
  generic: Record<string, number>;
  /** Targets that name no page of the prototype: the element is kept, the link is not. */
  danglingTargets: { elementId: string; target: string }[];
}

export const LAYER_IDS = { rendering: 'rendering', own: 'page-elements', discussions: 'discussions' } as const;
export const DISCUSSION_STYLE =
  'shape=note;size=10;whiteSpace=wrap;align=left;verticalAlign=top;spacingLeft=6;spacingTop=2;fillColor=#fff2cc;strokeColor=#d6b656;fontSize=11;';
const NOTE_WIDTH = 220;

/** The document's start, written before its diagrams; `mxfileClose` ends it. */
export function mxfileOpen(toolVersion: string, text: XmlText): string {
  const attrs: XmlAttr[] = [
    ['host', 'rabbit-export'],
    ['agent', `rabbit-export ${toolVersion}`],
    ['version', '14.6.12'],
    ['type', 'device'],
  ];
  return `${new XmlBuilder(text).start('mxfile', attrs).xml}\n`;
}

export function mxfileClose(): string {
  return `${endTag('mxfile').xml}\n`;
}

/** The diagram id a page gets, so `data:page/id,...` links can name it. */
export function diagramIdOf(pageId: string): string {
  return pageId;
}

export function diagramXml(input: DiagramInput, text: XmlText): { xml: string; stats: DiagramStats } {
  const x = new XmlBuilder(text);
  const stats: DiagramStats = { shapes: 0, links: 0, generic: {}, danglingTargets: [] };
  const uniqueId = uniqueIds(['0', ...Object.values(LAYER_IDS)]);
  const { width, height } = input.size;
  const cells: XmlNode[] = [x.element('mxCell', [['id', '0']])];
  const layer = (id: string, value: string, source?: string, ...more: XmlAttr[]): XmlNode =>
    x.element('mxCell', [
      ['id', id],
      ['value', value, source],
      ...more.filter((a) => a[0] === 'style'),
      ['parent', '0'],
      ...more.filter((a) => a[0] !== 'style'),
    ]);

  if (input.png !== undefined) {
    cells.push(layer(LAYER_IDS.rendering, 'Rendering', undefined, ['style', 'locked=1;']));
    const image = `shape=image;imageAspect=0;aspect=fixed;verticalLabelPosition=bottom;verticalAlign=top;image=data:image/png,${input.png.toString('base64')};`;
    const box = input.canvas ?? { x: 0, y: 0, width, height };
    cells.push(
      x.element(
        'mxCell',
        [
          ['id', uniqueId('rendering-png')],
          ['value', ''],
          ['style', image],
          ['vertex', '1'],
          ['parent', LAYER_IDS.rendering],
        ],
        [geometry(x, box)],
      ),
    );
  }
  for (const shown of input.layers) {
    const layerId = uniqueId(`layer-${shown.id}`);
    cells.push(layer(layerId, shown.name, textSource.layer(shown)));
    for (const element of shown.elements) cells.push(elementCell(x, element, layerId, uniqueId, input.pageIds, stats));
  }
  const pageName: [string, string] = [input.page.name, textSource.page(input.page)];
  cells.push(layer(LAYER_IDS.own, ...pageName));
  for (const element of input.elements)
    cells.push(elementCell(x, element, LAYER_IDS.own, uniqueId, input.pageIds, stats));
  if (input.discussions.length > 0) {
    cells.push(layer(LAYER_IDS.discussions, 'Discussions', undefined, ['style', 'locked=0;'], ['visible', '0']));
    for (const discussion of input.discussions) cells.push(discussionCell(x, discussion, uniqueId));
  }

  const model = x.element(
    'mxGraphModel',
    [
      ...(['grid', 'gridSize', 'guides', 'tooltips', 'connect', 'arrows', 'fold', 'page', 'pageScale'] as const).map(
        (name): XmlAttr => [name, name === 'gridSize' ? 10 : 1],
      ),
      ['pageWidth', width],
      ['pageHeight', height],
      ['math', 0],
      ['shadow', 0],
    ],
    [
      raw('\n      '),
      x.element('root', [], [...cells.flatMap((cell) => [raw('\n        '), cell]), raw('\n      ')]),
      raw('\n    '),
    ],
  );
  const diagram = x.element(
    'diagram',
    [
      ['id', diagramIdOf(input.page.id)],
      ['name', ...pageName],
    ],
    [raw('\n    '), model, raw('\n  ')],
  );
  return { xml: `  ${diagram.xml}\n`, stats };
}

function elementCell(
  x: XmlBuilder,
  element: ElementData,
  parent: string,
  uniqueId: UniqueId,
  pageIds: ReadonlySet<string>,
  stats: DiagramStats,
): XmlNode {
  const shape = shapeFor(element.type);
  // Each value with the text it comes from: the type is written up to three times, counted once.
  const type = textSource.element(element, 'type');
  const attrs: XmlAttr[] = [
    ['id', uniqueId(element.id)],
    element.text !== null
      ? ['label', element.text, textSource.element(element, 'text')]
      : ['label', shape.mapped ? '' : element.type, type],
  ];
  if (!shape.mapped) {
    addCount(stats.generic, element.type, 1);
    attrs.push(['tooltip', `Rabbit element of type "${element.type}" (no draw.io shape for it)`, type]);
  }
  attrs.push(['rabbitId', element.id], ['rabbitType', element.type, type]);
  if (element.target !== null) {
    if (pageIds.has(element.target)) {
      attrs.push(['link', `data:page/id,${diagramIdOf(element.target)}`]);
      stats.links++;
    } else {
      stats.danglingTargets.push({ elementId: element.id, target: element.target });
    }
  }
  attrs.push(['rabbitJson', { json: element.raw }, textSource.element(element, 'json')]);
  stats.shapes++;
  const style = shape.style + drawioStyleOf(element.style);
  return x.element('object', attrs, [
    x.element(
      'mxCell',
      [
        ['style', style, textSource.element(element, 'style')],
        ['vertex', '1'],
        ['parent', parent],
      ],
      [geometry(x, element.box)],
    ),
  ]);
}

function discussionCell(x: XmlBuilder, discussion: DiscussionData, uniqueId: UniqueId): XmlNode {
  const lines = discussionLines(discussion);
  // Roughly one line per 36 characters of the note's width, so the text fits without scrolling.
  const rows = lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 36)), 0);
  const box = { x: discussion.x, y: discussion.y, width: NOTE_WIDTH, height: 16 + rows * 14 };
  return x.element(
    'object',
    [
      ['id', uniqueId(`discussion-${discussion.id}`)],
      ['label', lines.join('\n')],
      ['rabbitDiscussionId', discussion.id],
      ['rabbitJson', { json: discussion.raw }],
    ],
    [
      x.element(
        'mxCell',
        [
          ['style', DISCUSSION_STYLE],
          ['vertex', '1'],
          ['parent', LAYER_IDS.discussions],
        ],
        [geometry(x, box)],
      ),
    ],
  );
}

function geometry(x: XmlBuilder, box: { x: number; y: number; width: number; height: number }): XmlNode {
  return x.element('mxGeometry', [
    ['x', box.x],
    ['y', box.y],
    ['width', box.width],
    ['height', box.height],
    ['as', 'geometry'],
  ]);
}
