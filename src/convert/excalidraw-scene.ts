import { createHash } from 'node:crypto';
import { pageFileOf, uniqueIds, type UniqueId } from './page-names.js';
import { discussionLines, type PageContent } from './page-walk.js';
import type { DiscussionData, ElementData } from './prototype-data.js';

/**
 * One page as an Excalidraw scene (`.excalidraw`, version 2): the rendering as a locked image
 * at the bottom, then each element as a rectangle (an ellipse for round types) with its label as
 * bound text, its archived JSON in `customData.rabbitJson` and, when it leads to another page, a
 * link to that page's file; discussions on top as yellow notes. Ids, seeds and nonces are derived
 * from the archive's ids, so the same archive gives the same files.
 */
export interface ExcalidrawStats {
  shapes: number;
  links: number;
  danglingTargets: { elementId: string; target: string }[];
}

type SceneElement = Record<string, unknown> & { id: string };

/** Excalidraw's Helvetica: the hand-drawn default would misrepresent a wireframe's labels. */
const HELVETICA = 2;
const LINE_HEIGHT = 1.25;
/** Fixed, so that converting the same archive twice gives the same bytes. */
const UPDATED = 1;
const ROUND_TYPES = /^(?:ellipse|circle|radio|radiobutton)$/i;
const NOTE_WIDTH = 220;

export function excalidrawFileOf(number: number, pageId: string): string {
  return pageFileOf(number, pageId, 'excalidraw');
}

export function excalidrawScene(
  content: PageContent,
  fileOfPage: ReadonlyMap<string, string>,
  source: string,
): { json: string; stats: ExcalidrawStats } {
  const stats: ExcalidrawStats = { shapes: 0, links: 0, danglingTargets: [] };
  const uniqueId = uniqueIds();
  const elements: SceneElement[] = [];
  const files: Record<string, unknown> = {};
  if (content.png !== undefined) {
    const fileId = createHash('sha1').update(content.png).digest('hex');
    const box = content.canvas ?? { x: 0, y: 0, ...content.size };
    elements.push({
      ...base(uniqueId('rendering'), 'image', box),
      locked: true,
      status: 'saved',
      fileId,
      scale: [1, 1],
      crop: null,
      customData: { rabbitRendering: content.page.id },
    });
    files[fileId] = {
      mimeType: 'image/png',
      id: fileId,
      dataURL: `data:image/png;base64,${content.png.toString('base64')}`,
      created: UPDATED,
      lastRetrieved: UPDATED,
    };
  }
  const shapes = (list: readonly ElementData[], layer: string | null): void => {
    for (const element of list) elements.push(...elementShape(element, layer, uniqueId, fileOfPage, stats));
  };
  for (const shown of content.layers) shapes(shown.elements, shown.id);
  shapes(content.elements, null);
  for (const discussion of content.discussions) elements.push(...discussionNote(discussion, uniqueId));

  const scene = {
    type: 'excalidraw',
    version: 2,
    source,
    elements,
    appState: { viewBackgroundColor: '#ffffff', gridSize: null },
    files,
  };
  return { json: `${JSON.stringify(scene, null, 2)}\n`, stats };
}

function elementShape(
  element: ElementData,
  layer: string | null,
  uniqueId: UniqueId,
  fileOfPage: ReadonlyMap<string, string>,
  stats: ExcalidrawStats,
): SceneElement[] {
  // Excalidraw drops an element of no size at all on loading; one unit keeps it, and its data.
  const box = { ...element.box, width: Math.max(element.box.width, 1), height: Math.max(element.box.height, 1) };
  const id = uniqueId(element.id);
  let link: string | null = null;
  if (element.target !== null) {
    const file = fileOfPage.get(element.target);
    if (file === undefined) stats.danglingTargets.push({ elementId: element.id, target: element.target });
    else {
      link = file;
      stats.links++;
    }
  }
  stats.shapes++;
  const label =
    element.text !== null && element.text !== ''
      ? boundText(uniqueId(`${id}-label`), id, element.text, box)
      : undefined;
  const shape: SceneElement = {
    ...base(id, ROUND_TYPES.test(element.type) ? 'ellipse' : 'rectangle', box),
    strokeColor: '#3d7bd9',
    boundElements: label === undefined ? [] : [{ type: 'text', id: label.id }],
    link,
    customData: { rabbitId: element.id, rabbitType: element.type, rabbitLayer: layer, rabbitJson: element.raw },
  };
  return label === undefined ? [shape] : [shape, label];
}

function discussionNote(discussion: DiscussionData, uniqueId: UniqueId): SceneElement[] {
  const lines = discussionLines(discussion);
  const rows = lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 36)), 0);
  const box = { x: discussion.x, y: discussion.y, width: NOTE_WIDTH, height: 16 + rows * 14 };
  const id = uniqueId(`discussion-${discussion.id}`);
  const label = boundText(uniqueId(`${id}-label`), id, lines.join('\n'), box, 11);
  return [
    {
      ...base(id, 'rectangle', box),
      strokeColor: '#d6b656',
      backgroundColor: '#fff2cc',
      boundElements: [{ type: 'text', id: label.id }],
      customData: { rabbitDiscussionId: discussion.id, rabbitJson: discussion.raw },
    },
    label,
  ];
}

/** Text inside its container, sized to the box like the service's labels (a glyph about 0.55 em wide). */
function boundText(id: string, containerId: string, text: string, box: ElementData['box'], maxSize = 14): SceneElement {
  const lines = text.split(/\r\n|\r|\n/);
  const longest = Math.max(...lines.map((line) => [...line].length), 1);
  const fontSize = Math.max(
    4,
    Math.min(maxSize, box.height / lines.length / LINE_HEIGHT, (box.width - 6) / (longest * 0.55)),
  );
  return {
    ...base(id, 'text', {
      x: box.x + 3,
      y: box.y + 3,
      width: Math.max(1, Math.min(box.width - 6, longest * fontSize * 0.55)),
      height: lines.length * fontSize * LINE_HEIGHT,
    }),
    strokeColor: '#1a1a1a',
    text,
    originalText: text,
    fontSize: Number(fontSize.toFixed(2)),
    fontFamily: HELVETICA,
    textAlign: 'left',
    verticalAlign: 'top',
    containerId,
    lineHeight: LINE_HEIGHT,
    autoResize: true,
  };
}

/** The fields every Excalidraw element has, at their plain defaults. */
function base(id: string, type: string, box: { x: number; y: number; width: number; height: number }): SceneElement {
  const hash = createHash('sha1').update(id).digest();
  return {
    id,
    type,
    x: box.x,
    y: box.y,
    width: box.width,
    height: box.height,
    angle: 0,
    strokeColor: '#1e1e1e',
    backgroundColor: 'transparent',
    fillStyle: 'solid',
    strokeWidth: 1,
    strokeStyle: 'solid',
    roughness: 0,
    opacity: 100,
    roundness: null,
    seed: hash.readUInt32BE(0) & 0x7fffffff,
    version: 1,
    versionNonce: hash.readUInt32BE(4) & 0x7fffffff,
    isDeleted: false,
    groupIds: [],
    frameId: null,
    boundElements: null,
    updated: UPDATED,
    link: null,
    locked: false,
  };
}
