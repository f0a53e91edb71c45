import { compareIds } from '../api/ids.js';
import { jsonText } from '../api/json-body.js';
import { milestonesOf } from '../api/revision.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { isRabbitError, RabbitError } from '../core/errors.js';
import { archivedIdsOf, isArchivedId } from '../api/archived-ids.js';
import {
  elementEntriesIn,
  parseRevisionEntry,
  revisionEntryNameOf,
  revisionEntryPrefix,
  type ParsedPath,
} from '../api/entry-paths.js';
import type { KindName } from '../api/resource-kinds.js';

/**
 * The texts of one archived prototype, read from its bodies by the rules convert reads them by
 * (convert/prototype-data.ts: both list forms of pages and elements, an element's `text` as a
 * string or a number, a missing name as none). Search sits below the viewer (site/), which makes
 * the index at export, and convert sits above both: so search has this reader of its own, and a
 * test holds the two to the same texts. Whatever is missing, damaged or of the wrong type is
 * left out, never fatal: the archive is hostile.
 */
export interface ElementTexts {
  id: string;
  /** The element's `text`, as convert takes it. */
  text: string | null;
  /** Its JSON, parsed (an object), for the other texts it holds. */
  value: Json;
}

type Json = Record<string, unknown>;

/** No element, page or discussion the service sent comes near this. */
const MAX_JSON_BYTES = 64 * 1024 * 1024;
/** Element entries read at once. */
const READ_AHEAD = 16;

/** What the reader needs of a prototype's entries (below its revision's folder): the catalog's, or the export's as it stores them. */
export type TextSource = Pick<ArchivedPrototype, 'read' | 'names'>;

export class ArchivedTexts {
  constructor(readonly prototype: TextSource) {}

  async json(rest: string): Promise<unknown> {
    let bytes: Buffer | undefined;
    try {
      bytes = await this.prototype.read(rest, MAX_JSON_BYTES);
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      return undefined;
    }
    if (bytes === undefined) return undefined;
    try {
      return JSON.parse(jsonText(bytes)) as unknown;
    } catch {
      return undefined;
    }
  }

  async milestones(): Promise<{ revision: number; name: string }[]> {
    return milestonesOf(await this.json(revisionEntryNameOf('prototype', {})))
      .map((m) => ({ revision: m.revision, name: typeof m.name === 'string' ? m.name : '' }))
      .sort((a, b) => a.revision - b.revision);
  }

  /** In the order of pages.json; without one, the page entries the archive holds, in id order. */
  async pageIds(): Promise<string[]> {
    const list = await this.json(revisionEntryNameOf('page-list', {}));
    if (Array.isArray(list) || asObject(list) !== undefined) return archivedIdsOf(list);
    const ids: string[] = [];
    for await (const entry of entriesOfKind(this.prototype, 'page')) ids.push(entry.page as string);
    return ids.sort(compareIds);
  }

  async page(pageId: string): Promise<{ name: string | null; layerIds: string[] }> {
    const value = asObject(await this.json(revisionEntryNameOf('page', { page: pageId })));
    const layers = Array.isArray(value?.layers) ? value.layers : [];
    return {
      name: typeof value?.name === 'string' ? value.name : null,
      layerIds: layers.filter((id): id is string => typeof id === 'string' && isArchivedId(id)),
    };
  }

  async layerName(layerId: string): Promise<string | null> {
    const value = asObject(await this.json(revisionEntryNameOf('layer', { layer: layerId })));
    return typeof value?.name === 'string' ? value.name : null;
  }

  /** The elements of `pages/{id}` or `layers/{id}`, in the order listed, a few reads at a time. */
  async elements(parent: string): Promise<ElementTexts[]> {
    const names = elementEntriesIn(parent);
    if (names === undefined) throw new RabbitError('BAD_ID', `${JSON.stringify(parent)} holds no elements`);
    const ids = archivedIdsOf(await this.json(names.list));
    const out: ElementTexts[] = [];
    for (let start = 0; start < ids.length; start += READ_AHEAD) {
      const batch = ids.slice(start, start + READ_AHEAD);
      const values = await Promise.all(batch.map((id) => this.json(names.element(id))));
      for (const [index, raw] of values.entries()) {
        const value = asObject(raw);
        if (value === undefined) continue;
        const text = value.text;
        out.push({
          id: batch[index] as string,
          text: typeof text === 'string' ? text : typeof text === 'number' ? String(text) : null,
          value,
        });
      }
    }
    return out;
  }

  /** Every discussion, in id order: its page, title, entries' texts and their authors (each once). */
  async *discussions(): AsyncGenerator<{
    id: string;
    pageId: string | null;
    title: string;
    entries: string[];
    authors: string[];
  }> {
    const ids: string[] = [];
    for await (const entry of entriesOfKind(this.prototype, 'discussion')) ids.push(entry.discussion as string);
    for (const id of ids.sort(compareIds)) {
      const value = asObject(await this.json(revisionEntryNameOf('discussion', { discussion: id })));
      if (value === undefined) continue;
      const entries = (Array.isArray(value.entries) ? value.entries : []).map(asObject);
      yield {
        id,
        pageId: typeof value.pageId === 'string' && isArchivedId(value.pageId) ? value.pageId : null,
        title: typeof value.title === 'string' ? value.title : '',
        entries: entries
          .map((entry) => (entry?.text as unknown) ?? '')
          .filter((text): text is string => typeof text === 'string'),
        authors: [
          ...new Set(
            entries.map((entry) => entry?.author as unknown).filter((name): name is string => typeof name === 'string'),
          ),
        ],
      };
    }
  }
}

/** The entries of the prototype of one kind, parsed: only names that can be of the kind are parsed. */
async function* entriesOfKind(source: TextSource, kind: KindName): AsyncGenerator<ParsedPath> {
  const prefix = revisionEntryPrefix(kind);
  for await (const rest of source.names()) {
    if (!rest.startsWith(prefix)) continue;
    const entry = parseRevisionEntry(rest);
    if (entry?.kind === kind) yield entry;
  }
}

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}
