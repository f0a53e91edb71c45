import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { ArchivedPrototypeReader } from '../archive/archived-prototype-reader.js';
import { asObject, finite, type ElementRecord } from '../archive/archived-records.js';
import type { ElementParent } from '../api/reader-names.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';

/**
 * One prototype's data as convert draws it, read from its archived bodies entry by entry (see
 * PrototypeReader): what is missing or damaged is recorded as skipped (with why) instead of
 * failing the prototype.
 */
export interface ElementData {
  id: string;
  /** Its entry below the revision's folder (`pages/page1/elements/element3.json`): which text is whose. */
  entry: string;
  /** The element's JSON exactly as archived. */
  raw: string;
  type: string;
  box: { x: number; y: number; width: number; height: number };
  text: string | null;
  target: string | null;
  style: unknown;
}

export interface LayerData {
  id: string;
  name: string;
  elements: ElementData[];
}

export interface PageMeta {
  id: string;
  name: string;
  layerIds: string[];
}

export interface DiscussionData {
  id: string;
  raw: string;
  pageId: string | null;
  title: string;
  x: number;
  y: number;
  entries: { author: string; timestamp: number | null; text: string }[];
}

/** Printed as `skipped {what}: {why}` and `note: {what} {why}`, so a note's `why` continues its `what`. */
export interface Skipped {
  what: string;
  why: string;
}

/**
 * The largest coordinate or size, in pixels, taken from an element or discussion. The service's
 * pages are a few thousand pixels; past this a value is not one it drew, and sums of such values
 * (1e308 + 1e308) overflow to Infinity, which no document format can hold.
 */
export const MAX_COORDINATE = 1_000_000;

/**
 * Convert's view of one prototype: what the archive's reader (archive/archived-prototype-reader.ts)
 * reads, with convert's defaults (a nameless page or layer is named by its id) and its bound on
 * geometry, and every problem recorded for the report: a lost entry as skipped, an id listed twice
 * (read once, nothing lost) as a note.
 */
export class PrototypeReader {
  readonly skipped: Skipped[] = [];
  /** Not losses, but worth telling: defaults used for missing geometry, links leading nowhere. */
  readonly notes: Skipped[] = [];
  readonly entries: ArchivedPrototypeReader;

  /** The prototype's entries are read through the archive's catalog (archive/archive-catalog.ts). */
  constructor(readonly prototype: ArchivedPrototype) {
    this.entries = new ArchivedPrototypeReader(prototype, {
      onProblem: ({ what, error }) =>
        (error.code === 'DUPLICATE_ENTRY' ? this.notes : this.skipped).push({ what, why: error.message }),
    });
  }

  has(rest: string): boolean {
    return this.prototype.has(rest);
  }

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return this.entries.entryName(rest);
  }

  /** The entry's bytes, or undefined (recorded as skipped) when it is missing, damaged or too large. */
  bytes(rest: string, what: string, maxBytes: number): Promise<Buffer | undefined> {
    return this.entries.bytes(rest, what, maxBytes);
  }

  /** Page ids in the order of pages.json, else in page id order, with a note saying so. */
  async pageIds(): Promise<string[]> {
    const { ids, listed } = await this.entries.pageOrder();
    if (!listed && ids.length > 0) {
      this.notes.push({
        what: 'the page order',
        why: `follows the page ids, since pages.json could not be read: the pages are the ${ids.length} page files ${this.entryName(RESOURCE_KINDS.page.entry)} the archive holds`,
      });
    }
    return ids;
  }

  async pageMeta(pageId: string): Promise<PageMeta> {
    const page = await this.entries.page(pageId);
    return { id: pageId, name: page.name ?? pageId, layerIds: page.layerIds };
  }

  async layer(layerId: string): Promise<LayerData> {
    const layer = await this.entries.layer(layerId);
    return { id: layerId, name: layer.name ?? layerId, elements: await this.elements('layer', layerId) };
  }

  /** The elements of a page or layer, in the order listed; those beyond MAX_COORDINATE are skipped. */
  async elements(parent: ElementParent, id: string): Promise<ElementData[]> {
    const out: ElementData[] = [];
    for await (const record of this.entries.elements(parent, id)) {
      const element = this.elementOf(record, `${parent} ${id}`);
      if (element !== undefined) out.push(element);
    }
    return out;
  }

  /** Every discussion of the prototype, in id order; one placed beyond MAX_COORDINATE is put at 0,0. */
  async discussions(): Promise<DiscussionData[]> {
    const out: DiscussionData[] = [];
    for await (const discussion of this.entries.discussions()) {
      const [x, y] = [bounded(discussion.x), bounded(discussion.y)];
      const outside = x === undefined || y === undefined;
      if (outside)
        this.notes.push({
          what: `discussion ${discussion.id}`,
          why: `has a position beyond ±${MAX_COORDINATE} px, so it was placed at 0,0`,
        });
      out.push({
        id: discussion.id,
        raw: discussion.raw,
        pageId: discussion.pageId,
        title: discussion.title ?? '',
        x: outside ? 0 : (x ?? 0),
        y: outside ? 0 : (y ?? 0),
        entries: discussion.entries.map((entry) => ({
          author: entry.author ?? '',
          timestamp: entry.timestamp,
          text: entry.text ?? '',
        })),
      });
    }
    return out;
  }

  /** The element, or undefined (recorded as skipped) when its geometry is beyond MAX_COORDINATE. */
  private elementOf(record: ElementRecord, parentLabel: string): ElementData | undefined {
    const { id, value } = record;
    const position = asObject(value.position);
    const dimensions = asObject(value.dimensions);
    const geometry = [position?.x, position?.y, dimensions?.width, dimensions?.height].map(bounded);
    if (geometry.includes(undefined)) {
      this.skipped.push({
        what: `element ${id} of ${parentLabel}`,
        why: `its position or size is beyond ±${MAX_COORDINATE} px, so it is not drawn`,
      });
      return undefined;
    }
    const [x, y, width, height] = geometry as (number | null)[];
    if (x === null || y === null || width === null || height === null) {
      this.notes.push({
        what: `element ${id} of ${parentLabel}`,
        why: 'has no complete position and dimensions; missing values became 0,0 and 40x20',
      });
    }
    return {
      id,
      entry: record.entry,
      raw: record.raw,
      type: typeof value.type === 'string' && value.type !== '' ? value.type : 'unknown',
      box: { x: x ?? 0, y: y ?? 0, width: width ?? 40, height: height ?? 20 },
      text: record.text,
      target: typeof value.target === 'string' ? value.target : null,
      style: value.style,
    };
  }
}

/** A coordinate: null when absent or not a finite number (a default is used), undefined when beyond the bound. */
function bounded(value: unknown): number | null | undefined {
  const number = finite(value);
  return number !== null && Math.abs(number) > MAX_COORDINATE ? undefined : number;
}
