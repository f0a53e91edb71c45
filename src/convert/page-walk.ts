import { RabbitError } from '../core/errors.js';
import { revisionEntryNameOf } from '../api/entry-paths.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { pngSize } from '../archive/archived-records.js';
import { emptyPrototypeReport, type PrototypeReport } from './report.js';
import { XmlText } from './xml-text.js';
import {
  PrototypeReader,
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
  const meta = await reader.entries.meta();
  return {
    id,
    name,
    revision,
    lastModification: meta.lastModification,
    lastUser: meta.lastUser,
    milestones: meta.milestones.map((m) => ({ ...m, user: m.user ?? '' })),
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
    const elements = await reader.elements('page', page.id);
    const png = await pagePng(reader, page.id, rendering);
    const grown = grownPage(png.size ?? MIN_PAGE, [...shown.flatMap((layer) => layer.elements), ...elements]);
    for (const element of grown.outside) {
      reader.skipped.push({
        what: `element ${element.id} on page ${page.id}`,
        why: `would grow the page past ${MAX_PAGE} px a side (the most a PDF page holds), so it is not drawn`,
      });
    }
    const move = shiftBy(grown.canvas.x, grown.canvas.y);
    const drawn = (list: ElementData[]): ElementData[] =>
      list.filter((element) => !grown.outside.has(element)).map(move.element);
    yield {
      page,
      number: index + 1,
      size: grown.size,
      canvas: grown.canvas,
      png: png.embed,
      layers: shown.map((layer) => ({ ...layer, elements: drawn(layer.elements) })),
      elements: drawn(elements),
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

/**
 * A page's rendering is read whole and decoded by whoever embeds it (pdfkit, a browser), so both
 * its bytes and its declared pixels are bounded before anything reads or decodes it. The
 * service's renderings are a few megabytes of a few million pixels.
 */
export const MAX_RENDERING_BYTES = 64 * 1024 * 1024;
export const MAX_RENDERING_PIXELS = 50_000_000;

/**
 * The page's PNG for its size, and to embed when the rendering is wanted. One too large is
 * skipped (the page is then sized to its elements), never read past MAX_RENDERING_BYTES.
 */
export async function pagePng(
  reader: PrototypeReader,
  pageId: string,
  rendering: boolean,
): Promise<{ size?: { width: number; height: number }; embed?: Buffer }> {
  const rest = revisionEntryNameOf('page-png', { page: pageId });
  const what = `the rendering of page ${pageId}`;
  // Without the rendering a missing PNG loses nothing: the page is then sized to its elements.
  if (!rendering && !reader.has(rest)) return {};
  const png = await reader.bytes(rest, what, MAX_RENDERING_BYTES);
  if (png === undefined) return {};
  const size = pngSize(png);
  if (size === undefined) {
    reader.skipped.push({ what, why: `${reader.entryName(rest)} is not a PNG image` });
    return {};
  }
  if (size.width > MAX_PAGE || size.height > MAX_PAGE || size.width * size.height > MAX_RENDERING_PIXELS) {
    reader.skipped.push({
      what,
      why: `${reader.entryName(rest)} declares ${size.width}x${size.height} pixels, more than ${MAX_PAGE} a side or ${MAX_RENDERING_PIXELS} in all, so the page is converted without it`,
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
  page: (page: PageMeta): string => `page ${page.id} name`,
  layer: (layer: LayerData): string => `layer ${layer.id} name`,
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
 * The largest page side, in pixels, for every format: a PDF page is at most 14,400 units a side
 * (ISO 32000-1, annex C.2), and a pixel is drawn as one unit. A page grows to hold its elements up
 * to this; one that would take it further is skipped, so no single element makes a page absurd.
 */
export const MAX_PAGE = 14_400;

/**
 * The union of the service's page (0,0 to its size) and every element's box, whole units, moved so
 * that it starts at 0,0: `canvas` is where the service's 0,0 lands. Elements are taken in order;
 * one that would make a side longer than MAX_PAGE is left `outside` and does not grow the page.
 */
export function grownPage(
  page: { width: number; height: number },
  elements: readonly ElementData[],
): { size: { width: number; height: number }; canvas: Box; outside: Set<ElementData> } {
  let [left, top, right, bottom] = [0, 0, page.width, page.height];
  const outside = new Set<ElementData>();
  for (const element of elements) {
    const { x, y, width, height } = element.box;
    // A negative size reaches left of or above its position.
    const l = Math.min(left, Math.floor(Math.min(x, x + width)));
    const t = Math.min(top, Math.floor(Math.min(y, y + height)));
    const r = Math.max(right, Math.ceil(Math.max(x, x + width)));
    const b = Math.max(bottom, Math.ceil(Math.max(y, y + height)));
    if (r - l > MAX_PAGE || b - t > MAX_PAGE) outside.add(element);
    else [left, top, right, bottom] = [l, t, r, b];
  }
  return {
    size: { width: right - left, height: bottom - top },
    canvas: { x: -left, y: -top, width: page.width, height: page.height },
    outside,
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
