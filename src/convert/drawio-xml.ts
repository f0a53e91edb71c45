import { drawioStyleOf } from './element-style.js';
import { textSource } from './page-walk.js';
import type { DiscussionData, ElementData, LayerData, PageMeta } from './prototype-data.js';
import { shapeFor } from './shape-table.js';
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

export function mxfileOpen(toolVersion: string): string {
  return `<mxfile host="rabbit-export" agent="rabbit-export ${toolVersion}" version="14.6.12" type="device">\n`;
}

export const MXFILE_CLOSE = '</mxfile>\n';

/** The diagram id a page gets, so `data:page/id,...` links can name it. */
export function diagramIdOf(pageId: string): string {
  return pageId;
}

export function diagramXml(input: DiagramInput, text: XmlText): { xml: string; stats: DiagramStats } {
  const stats: DiagramStats = { shapes: 0, links: 0, generic: {}, danglingTargets: [] };
  const used = new Set<string>(['0', ...Object.values(LAYER_IDS)]);
  const uniqueId = (wanted: string): string => {
    let id = wanted;
    for (let n = 2; used.has(id); n++) id = `${wanted}-${n}`;
    used.add(id);
    return id;
  };
  const { width, height } = input.size;
  const cells: string[] = ['<mxCell id="0"/>'];

  if (input.png !== undefined) {
    cells.push(`<mxCell id="${LAYER_IDS.rendering}" value="Rendering" style="locked=1;" parent="0"/>`);
    const image = `shape=image;imageAspect=0;aspect=fixed;verticalLabelPosition=bottom;verticalAlign=top;image=data:image/png,${input.png.toString('base64')};`;
    cells.push(
      `<mxCell id="${uniqueId('rendering-png')}" value="" style="${image}" vertex="1" parent="${LAYER_IDS.rendering}">${geometry({ x: 0, y: 0, width, height })}</mxCell>`,
    );
  }
  for (const layer of input.layers) {
    const layerId = uniqueId(`layer-${layer.id}`);
    cells.push(`<mxCell id="${layerId}" value="${text.attr(layer.name, textSource.layer(layer))}" parent="0"/>`);
    for (const element of layer.elements)
      cells.push(elementCell(element, layerId, uniqueId, input.pageIds, stats, text));
  }
  const pageName = text.attr(input.page.name, textSource.page(input.page));
  cells.push(`<mxCell id="${LAYER_IDS.own}" value="${pageName}" parent="0"/>`);
  for (const element of input.elements)
    cells.push(elementCell(element, LAYER_IDS.own, uniqueId, input.pageIds, stats, text));
  if (input.discussions.length > 0) {
    cells.push(`<mxCell id="${LAYER_IDS.discussions}" value="Discussions" style="locked=0;" parent="0" visible="0"/>`);
    for (const discussion of input.discussions) cells.push(discussionCell(discussion, uniqueId, text));
  }

  const model =
    `<mxGraphModel grid="1" gridSize="10" guides="1" tooltips="1" connect="1" arrows="1" fold="1" page="1" pageScale="1" ` +
    `pageWidth="${width}" pageHeight="${height}" math="0" shadow="0">`;
  const xml =
    `  <diagram id="${text.attr(diagramIdOf(input.page.id))}" name="${pageName}">\n` +
    `    ${model}\n      <root>\n${cells.map((cell) => `        ${cell}\n`).join('')}      </root>\n    </mxGraphModel>\n  </diagram>\n`;
  return { xml, stats };
}

function elementCell(
  element: ElementData,
  parent: string,
  uniqueId: (wanted: string) => string,
  pageIds: ReadonlySet<string>,
  stats: DiagramStats,
  text: XmlText,
): string {
  const shape = shapeFor(element.type);
  // Each value with the text it comes from: the type is written up to three times, counted once.
  const type = textSource.element(element, 'type');
  const attrs: [string, string, string?][] = [
    element.text !== null
      ? ['label', element.text, textSource.element(element, 'text')]
      : ['label', shape.mapped ? '' : element.type, type],
  ];
  if (!shape.mapped) {
    stats.generic[element.type] = (stats.generic[element.type] ?? 0) + 1;
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
  stats.shapes++;
  const id = uniqueId(element.id);
  const style = shape.style + drawioStyleOf(element.style);
  return (
    `<object id="${text.attr(id)}"${attrs.map(([name, value, source]) => ` ${name}="${text.attr(value, source)}"`).join('')}` +
    ` rabbitJson="${text.json(element.raw, textSource.element(element, 'json'))}">` +
    `<mxCell style="${text.attr(style, textSource.element(element, 'style'))}" vertex="1" parent="${parent}">${geometry(element.box)}</mxCell></object>`
  );
}

function discussionCell(discussion: DiscussionData, uniqueId: (wanted: string) => string, text: XmlText): string {
  const lines = [
    discussion.title,
    ...discussion.entries.map((entry) => `${entry.author}, ${dateOf(entry.timestamp)}: ${entry.text}`),
  ];
  const label = lines.join('\n');
  // Roughly one line per 36 characters of the note's width, so the text fits without scrolling.
  const rows = lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 36)), 0);
  const box = { x: discussion.x, y: discussion.y, width: NOTE_WIDTH, height: 16 + rows * 14 };
  const id = uniqueId(`discussion-${discussion.id}`);
  return (
    `<object id="${id}" label="${text.attr(label)}" rabbitDiscussionId="${discussion.id}" rabbitJson="${text.json(discussion.raw)}">` +
    `<mxCell style="${DISCUSSION_STYLE}" vertex="1" parent="${LAYER_IDS.discussions}">${geometry(box)}</mxCell></object>`
  );
}

function geometry(box: { x: number; y: number; width: number; height: number }): string {
  return `<mxGeometry x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" as="geometry"/>`;
}

function dateOf(timestamp: number | null): string {
  if (timestamp === null) return 'undated';
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? 'undated' : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
