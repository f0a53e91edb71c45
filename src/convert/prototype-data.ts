import { isRabbitError, RabbitError } from '../core/errors.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { compareIds } from '../api/ids.js';
import { jsonText } from '../api/json-body.js';
import { archivedIdsOf } from '../api/archived-ids.js';
import {
  elementEntriesIn,
  elementFolderOf,
  parseRevisionEntry,
  revisionEntryNameOf,
  revisionFolderOf,
} from '../api/entry-paths.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';

/**
 * One prototype's data, read from its archived bodies entry by entry. Bodies are the service's
 * text: every field is checked for its type, and what is missing or damaged is recorded as skipped
 * (with why) instead of failing the prototype.
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

type Json = Record<string, unknown>;

/** Elements' and pages' JSON are small; anything past this is not one the service sent. */
const MAX_JSON_BYTES = 64 * 1024 * 1024;
/**
 * The largest coordinate or size, in pixels, taken from an element or discussion. The service's
 * pages are a few thousand pixels; past this a value is not one it drew, and sums of such values
 * (1e308 + 1e308) overflow to Infinity, which no document format can hold.
 */
export const MAX_COORDINATE = 1_000_000;
/** Element entries read at once: enough to keep the disk busy, few enough to stay small. */
const READ_AHEAD = 16;

export class PrototypeReader {
  readonly skipped: Skipped[] = [];
  /** Not losses, but worth telling: defaults used for missing geometry, links leading nowhere. */
  readonly notes: Skipped[] = [];

  /** The prototype's entries are read through the archive's catalog (archive/archive-catalog.ts). */
  constructor(readonly prototype: ArchivedPrototype) {}

  has(rest: string): boolean {
    return this.prototype.has(rest);
  }

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return revisionFolderOf(this.prototype.id, this.prototype.revision) + rest;
  }

  /** The entry's bytes, or undefined (recorded as skipped) when it is missing or damaged. */
  async bytes(rest: string, what: string, maxBytes = MAX_JSON_BYTES): Promise<Buffer | undefined> {
    try {
      const data = await this.prototype.read(rest, maxBytes);
      if (data === undefined) this.skipped.push({ what, why: `${this.entryName(rest)} is not in the archive` });
      return data;
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      this.skipped.push({ what, why: error.message });
      return undefined;
    }
  }

  async json(rest: string, what: string): Promise<{ value: unknown; raw: string } | undefined> {
    const bytes = await this.bytes(rest, what);
    if (bytes === undefined) return undefined;
    const raw = jsonText(bytes);
    try {
      return { value: JSON.parse(raw) as unknown, raw };
    } catch {
      this.skipped.push({ what, why: `${this.entryName(rest)} is not valid JSON` });
      return undefined;
    }
  }

  /**
   * Page ids in the order of pages.json, in both forms the service used. When pages.json cannot be
   * read, the pages are those whose page entry (`pages/{id}.json`) the archive holds, in page id
   * order: the page JSON has no position of its own, so that is the only order left.
   */
  async pageIds(): Promise<string[]> {
    const listName = revisionEntryNameOf('page-list', {});
    const list = await this.json(listName, 'the list of pages');
    if (list !== undefined && (Array.isArray(list.value) || asObject(list.value) !== undefined)) {
      return archivedIdsOf(list.value);
    }
    if (list !== undefined) {
      this.skipped.push({
        what: 'the list of pages',
        why: `${this.entryName(listName)} is not a list of page ids`,
      });
    }
    const ids: string[] = [];
    for await (const rest of this.prototype.names()) {
      const entry = parseRevisionEntry(rest);
      if (entry?.kind === 'page') ids.push(entry.page as string);
    }
    ids.sort(compareIds);
    if (ids.length > 0) {
      this.notes.push({
        what: 'the page order',
        why: `follows the page ids, since pages.json could not be read: the pages are the ${ids.length} page files ${this.entryName(RESOURCE_KINDS.page.entry)} the archive holds`,
      });
    }
    return ids;
  }

  async pageMeta(pageId: string): Promise<PageMeta> {
    const value = asObject((await this.json(revisionEntryNameOf('page', { page: pageId }), `page ${pageId}`))?.value);
    const layers = Array.isArray(value?.layers) ? value.layers : [];
    return {
      id: pageId,
      name: typeof value?.name === 'string' ? value.name : pageId,
      layerIds: layers.filter((id): id is string => typeof id === 'string'),
    };
  }

  async layer(layerId: string): Promise<LayerData> {
    let names: { entry: string; folder: string };
    try {
      names = { entry: revisionEntryNameOf('layer', { layer: layerId }), folder: elementFolderOf('layer', layerId) };
    } catch (error) {
      // A page may name any text as its layer: one that makes no safe name is told, not read.
      if (!isRabbitError(error)) throw error;
      this.skipped.push({ what: `layer ${layerId}`, why: error.message });
      return { id: layerId, name: layerId, elements: [] };
    }
    const value = asObject((await this.json(names.entry, `layer ${layerId}`))?.value);
    return {
      id: layerId,
      name: typeof value?.name === 'string' ? value.name : layerId,
      elements: await this.elements(names.folder, `layer ${layerId}`),
    };
  }

  /** The elements of a page or layer, in its folder (`pages/{id}`: elementFolderOf), in the order listed. */
  async elements(parent: string, parentLabel: string): Promise<ElementData[]> {
    const names = elementEntriesIn(parent);
    if (names === undefined) throw new RabbitError('BAD_ID', `${JSON.stringify(parent)} holds no elements`);
    const ids = archivedIdsOf((await this.json(names.list, `the elements of ${parentLabel}`))?.value);
    const out: ElementData[] = [];
    // A few reads at a time: one by one, each small entry waits for the disk on its own.
    for (let start = 0; start < ids.length; start += READ_AHEAD) {
      const batch = ids.slice(start, start + READ_AHEAD);
      const reads = await Promise.all(
        batch.map((id) => this.json(names.element(id), `element ${id} of ${parentLabel}`)),
      );
      for (const [index, read] of reads.entries()) {
        const id = batch[index] as string;
        if (read === undefined) continue;
        const value = asObject(read.value);
        if (value === undefined) {
          this.skipped.push({ what: `element ${id} of ${parentLabel}`, why: 'its JSON is not an object' });
          continue;
        }
        const element = this.elementOf(id, names.element(id), read.raw, value, parentLabel);
        if (element !== undefined) out.push(element);
      }
    }
    return out;
  }

  /** Every discussion of the prototype, in id order. */
  async discussions(): Promise<DiscussionData[]> {
    // The names stream from disk: only the discussions' ids are kept.
    const ids: string[] = [];
    for await (const rest of this.prototype.names()) {
      const entry = parseRevisionEntry(rest);
      if (entry?.kind === 'discussion') ids.push(entry.discussion as string);
    }
    ids.sort(compareIds);
    const out: DiscussionData[] = [];
    for (const id of ids) {
      const read = await this.json(revisionEntryNameOf('discussion', { discussion: id }), `discussion ${id}`);
      const value = asObject(read?.value);
      if (read === undefined || value === undefined) continue;
      const entries = (Array.isArray(value.entries) ? value.entries : []).map(asObject).map((entry) => ({
        author: typeof entry?.author === 'string' ? entry.author : '',
        timestamp: finite(entry?.timestamp),
        text: typeof entry?.text === 'string' ? entry.text : '',
      }));
      const [x, y] = [bounded(value.positionX), bounded(value.positionY)];
      const outside = x === undefined || y === undefined;
      if (outside)
        this.notes.push({
          what: `discussion ${id}`,
          why: `has a position beyond ±${MAX_COORDINATE} px, so it was placed at 0,0`,
        });
      out.push({
        id,
        raw: read.raw,
        pageId: typeof value.pageId === 'string' ? value.pageId : null,
        title: typeof value.title === 'string' ? value.title : '',
        x: outside ? 0 : (x ?? 0),
        y: outside ? 0 : (y ?? 0),
        entries,
      });
    }
    return out;
  }

  /** The element, or undefined (recorded as skipped) when its geometry is beyond MAX_COORDINATE. */
  private elementOf(id: string, entry: string, raw: string, value: Json, parentLabel: string): ElementData | undefined {
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
    const text = value.text;
    return {
      id,
      entry,
      raw,
      type: typeof value.type === 'string' && value.type !== '' ? value.type : 'unknown',
      box: { x: x ?? 0, y: y ?? 0, width: width ?? 40, height: height ?? 20 },
      text: typeof text === 'string' ? text : typeof text === 'number' ? String(text) : null,
      target: typeof value.target === 'string' ? value.target : null,
      style: value.style,
    };
  }
}

/** Width and height from the IHDR chunk, which a valid PNG has first. */
export function pngSize(png: Buffer): { width: number; height: number } | undefined {
  if (png.length < 24 || png.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** A coordinate: null when absent or not a finite number (a default is used), undefined when beyond the bound. */
function bounded(value: unknown): number | null | undefined {
  const number = finite(value);
  return number !== null && Math.abs(number) > MAX_COORDINATE ? undefined : number;
}
