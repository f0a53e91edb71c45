import { RabbitError } from '../core/errors.js';
import { milestonesOf } from '../api/revision.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { emptyPrototypeReport, type PrototypeReport } from './report.js';
import { XmlText } from './xml-text.js';
import {
  PrototypeReader,
  pngSize,
  type DiscussionData,
  type ElementData,
  type LayerData,
  type PageMeta,
} from './prototype-data.js';

/**
 * What every output of convert draws from a prototype, read through PrototypeReader: its head
 * (name, milestones, dates) and its pages one at a time, each with the layers it shows, its own
 * elements, its discussions and its rendering. Memory follows the biggest page, not the prototype.
 */
export interface PrototypeHead {
  id: string;
  name: string | null;
  revision: number;
  lastModification: number | null;
  lastUser: string | null;
  /** In revision order, whatever order the service listed them in. */
  milestones: { revision: number; created: number | null; name: string; user: string }[];
}

export interface PageContent {
  page: PageMeta;
  /** 1-based place of the page in the prototype. */
  number: number;
  /**
   * The page's size: the rendering's pixel size (else 100x100), grown to hold every element, those
   * left of or above it included, so that no label falls off the page.
   */
  size: { width: number; height: number };
  /**
   * Where the service's page, and so its rendering, sits on the grown page. Elements and
   * discussions are moved by the same offset (x, y), so they keep their place on the rendering.
   * Not given: the whole page, at 0,0.
   */
  canvas?: Box;
  /** The page's PNG when it is wanted and usable. */
  png: Buffer | undefined;
  layers: LayerData[];
  elements: ElementData[];
  discussions: DiscussionData[];
}

export interface PagePlan {
  pages: PageMeta[];
  pageIds: ReadonlySet<string>;
  discussions: ReadonlyMap<string, DiscussionData[]>;
}

export async function prototypeHead(reader: PrototypeReader): Promise<PrototypeHead> {
  const { id, name, revision } = reader.prototype;
  const value = (await reader.json('prototype.json', 'the prototype metadata'))?.value;
  const data = (value as { prototypeData?: Record<string, unknown> } | undefined)?.prototypeData;
  const milestones = milestonesOf(value)
    .map((m) => ({
      revision: m.revision,
      created: typeof m.created === 'string' && /^\d+$/.test(m.created) ? Number(m.created) : null,
      name: typeof m.name === 'string' ? m.name : '',
      user: typeof m.user?.name === 'string' ? m.user.name : '',
    }))
    .sort((a, b) => a.revision - b.revision);
  return {
    id,
    name,
    revision,
    lastModification: typeof data?.lastModification === 'number' ? data.lastModification : null,
    lastUser: typeof data?.lastUser === 'string' ? data.lastUser : null,
    milestones,
  };
}

export async function planPages(reader: PrototypeReader): Promise<PagePlan> {
  const pages: PageMeta[] = [];
  for (const pageId of await reader.pageIds()) pages.push(await reader.pageMeta(pageId));
  const pageIds = new Set(pages.map((page) => page.id));
  return { pages, pageIds, discussions: await discussionsByPage(reader, pageIds) };
}

/** The pages one by one; layers shared by pages are read once and kept for the prototype. */
export async function* pageContents(
  reader: PrototypeReader,
  plan: PagePlan,
  rendering: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<PageContent> {
  const layers = new Map<string, LayerData>();
  for (const [index, page] of plan.pages.entries()) {
    if (signal?.aborted) throw new RabbitError('INTERRUPTED', 'the conversion was interrupted');
    const shown: LayerData[] = [];
    for (const layerId of page.layerIds) {
      let layer = layers.get(layerId);
      if (layer === undefined) layers.set(layerId, (layer = await reader.layer(layerId)));
      shown.push(layer);
    }
    const elements = await reader.elements(`pages/${page.id}`, `page ${page.id}`);
    const png = await pagePng(reader, page.id, rendering);
    const grown = grownPage(png.size ?? MIN_PAGE, [...shown.flatMap((layer) => layer.elements), ...elements]);
    const move = shiftBy(grown.canvas.x, grown.canvas.y);
    yield {
      page,
      number: index + 1,
      size: grown.size,
      canvas: grown.canvas,
      png: png.embed,
      layers: shown.map((layer) => ({ ...layer, elements: layer.elements.map(move.element) })),
      elements: elements.map(move.element),
      discussions: (plan.discussions.get(page.id) ?? []).map(move.discussion),
    };
  }
}

export async function discussionsByPage(
  reader: PrototypeReader,
  pageIds: ReadonlySet<string>,
): Promise<Map<string, DiscussionData[]>> {
  const byPage = new Map<string, DiscussionData[]>();
  for (const discussion of await reader.discussions()) {
    if (discussion.pageId === null || !pageIds.has(discussion.pageId)) {
      reader.skipped.push({
        what: `discussion ${discussion.id}`,
        why: `its page ${discussion.pageId ?? '(none)'} is not a page of this prototype`,
      });
      continue;
    }
    const list = byPage.get(discussion.pageId) ?? [];
    list.push(discussion);
    byPage.set(discussion.pageId, list);
  }
  return byPage;
}

/** The page's PNG for its size, and to embed when the rendering is wanted. */
export async function pagePng(
  reader: PrototypeReader,
  pageId: string,
  rendering: boolean,
): Promise<{ size?: { width: number; height: number }; embed?: Buffer }> {
  const rest = `pages/${pageId}.png`;
  // Without the rendering a missing PNG loses nothing: the page is then sized to its elements.
  if (!rendering && !reader.has(rest)) return {};
  const png = await reader.bytes(rest, `the rendering of page ${pageId}`);
  if (png === undefined) return {};
  const size = pngSize(png);
  if (size === undefined) {
    reader.skipped.push({
      what: `the rendering of page ${pageId}`,
      why: `${reader.entryName(rest)} is not a PNG image`,
    });
    return {};
  }
  return rendering ? { size, embed: png } : { size };
}

/**
 * Where a text comes from (its entry, then the field), for XmlText to count what it drops from that
 * text once, however many times and pages it is written on.
 */
export const textSource = {
  page: (page: PageMeta): string => `pages/${page.id}.json name`,
  layer: (layer: LayerData): string => `layers/${layer.id}.json name`,
  element: (element: ElementData, field: 'text' | 'type' | 'style' | 'json'): string => `${element.entry} ${field}`,
};

/** The note on a prototype without pages, which gets no document. */
export const NO_PAGES = 'has no pages, so there is nothing to draw';

/** An element whose target names no page of the prototype: it is drawn, without the link. */
export function noteDangling(
  reader: PrototypeReader,
  pageId: string,
  dangling: { elementId: string; target: string },
): void {
  reader.notes.push({
    what: `element ${dangling.elementId} on page ${pageId}`,
    why: `links to ${dangling.target}, which is not a page of this prototype, so it has no link`,
  });
}

type Box = ElementData['box'];

/** A page without a usable rendering starts at this size, and grows to hold its elements. */
const MIN_PAGE = { width: 100, height: 100 };

/**
 * The union of the service's page (0,0 to its size) and every element's box, whole units, moved so
 * that it starts at 0,0: `canvas` is where the service's 0,0 lands.
 */
export function grownPage(
  page: { width: number; height: number },
  elements: readonly ElementData[],
): { size: { width: number; height: number }; canvas: Box } {
  let [left, top, right, bottom] = [0, 0, page.width, page.height];
  for (const { box } of elements) {
    left = Math.min(left, Math.floor(box.x));
    top = Math.min(top, Math.floor(box.y));
    right = Math.max(right, Math.ceil(box.x + box.width));
    bottom = Math.max(bottom, Math.ceil(box.y + box.height));
  }
  return {
    size: { width: right - left, height: bottom - top },
    canvas: { x: -left, y: -top, width: page.width, height: page.height },
  };
}

/** Copies moved by (dx, dy); the originals stay as read, since a layer is shared by pages. */
function shiftBy(
  dx: number,
  dy: number,
): { element: (e: ElementData) => ElementData; discussion: (d: DiscussionData) => DiscussionData } {
  if (dx === 0 && dy === 0) return { element: (e) => e, discussion: (d) => d };
  return {
    element: (e) => ({ ...e, box: { ...e.box, x: e.box.x + dx, y: e.box.y + dy } }),
    discussion: (d) => ({ ...d, x: d.x + dx, y: d.y + dy }),
  };
}

/** How a discussion reads as text: its title, then each entry with its author and date. */
export function discussionLines(discussion: DiscussionData): string[] {
  return [
    discussion.title,
    ...discussion.entries.map((entry) => `${entry.author}, ${dateOf(entry.timestamp)}: ${entry.text}`),
  ];
}

export function dateOf(timestamp: number | null): string {
  if (timestamp === null) return 'undated';
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? 'undated' : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * What converting one prototype starts from, whatever the output: its report, a reader of its
 * entries and the text cleaner; an archive that marks the prototype incomplete says so first.
 */
export function startPrototype(archived: ArchivedPrototype): {
  report: PrototypeReport;
  reader: PrototypeReader;
  text: XmlText;
} {
  const report = emptyPrototypeReport(archived.id, archived.name, archived.revision);
  const reader = new PrototypeReader(archived);
  if (!archived.complete)
    reader.skipped.push({
      what: 'prototype',
      why: 'the archive marks it incomplete: the export could not fetch all of it',
    });
  return { report, reader, text: new XmlText() };
}
