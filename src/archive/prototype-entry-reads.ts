import { isRabbitError, RabbitError, type ErrorCode } from '../core/errors.js';
import { isArchivedId } from '../api/archived-ids.js';
import { describe, normalizeId, type IdKind } from '../api/ids.js';
import { jsonText } from '../api/json-body.js';
import { revisionFolderOf, type PathIds } from '../api/entry-paths.js';
import { RESOURCE_KINDS, type KindName } from '../api/resource-kinds.js';
import { asObject, type Json } from './archived-records.js';

/**
 * How one entry of an archived prototype is read and judged, for its reader
 * (archived-prototype-reader.ts): within a bound, parsed, its shape checked, the ids of a list
 * checked and taken once. Nothing is told here: each read hands back what it found with the
 * problems it met, and the reader tells them when the record's turn comes.
 */
export const READ_LIMITS = {
  /** Any JSON entry: a list of 250,000 element ids runs to a few MB; past this it is not one the service sent. */
  jsonBytes: 64 * 1024 * 1024,
  /**
   * One element's JSON, a few hundred bytes from the service. A prototype has them by the hundred
   * thousand, read `readAhead` at a time: this keeps the window to a few MB whatever they claim.
   */
  elementBytes: 1024 * 1024,
  /** Entries read at once: enough to keep the disk busy, few enough to stay small. */
  readAhead: 16,
  /** Ids of a list told one by one when they are not ids; the rest are counted in one more problem. */
  toldIds: 16,
} as const;

/**
 * A prototype's entries, each by its name below its revision's folder (`pages.json`,
 * `pages/page1/elements.json`): the archive catalog's (archive-catalog.ts), or the export's bodies
 * as it spools them.
 */
export interface PrototypeEntries {
  readonly id: string;
  readonly revision: number | string;
  /** The names of the entries held, streamed. */
  names(): AsyncIterable<string>;
  /** The entry's bytes; undefined when none is held; a RabbitError when damaged or larger than `maxBytes`. */
  read(rest: string, maxBytes: number): Promise<Buffer | undefined>;
}

/** Something the reader could not use, or used in part. */
export interface EntryProblem {
  /** What is lost, as a report names it: `the list of pages`, `element element3 of layer layer1`. */
  what: string;
  /** The ids of what it is about: the page or layer of an element or element list, and the element. */
  ids: PathIds;
  /**
   * Why, by code: ENTRY_MISSING; ARCHIVE_CORRUPT or BODY_TOO_LARGE (damaged or larger than the
   * bound: the source's own); BAD_JSON; BAD_SHAPE (not an object, not a list); BAD_ID (a value a
   * list names that is no id of its kind); DUPLICATE_ENTRY (an id listed again, which is read
   * once, so nothing is lost). The message names the entry by its full name in the archive.
   */
  error: RabbitError;
}

/**
 * Which ids are taken: `archived`, any of letters and digits, as commands that show what an
 * archive holds take them; `service`, only the service's shapes (`page12`, `layer3`) and lists in
 * the forms the service sent, for restore, which puts them in requests.
 */
export type IdRule = 'archived' | 'service';

/** What is told of an entry: what is lost with it, and the ids of what holds it. */
export interface About {
  what: string;
  ids: PathIds;
  /** For an id a list names: what it is of (`page page1` for an element). */
  of?: string;
}

/** What a read found, and the problems it met on the way. */
export interface Loaded<T> {
  value: T;
  problems: EntryProblem[];
}

export interface JsonEntry {
  value: unknown;
  /** The entry's text exactly as archived (a leading byte-order mark aside). */
  raw: string;
}

export class EntryReads {
  constructor(
    private readonly source: PrototypeEntries,
    private readonly rule: IdRule = 'archived',
  ) {}

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return revisionFolderOf(this.source.id, this.source.revision) + rest;
  }

  async bytes(rest: string, about: About, maxBytes: number): Promise<Loaded<Buffer | undefined>> {
    try {
      const data = await this.source.read(rest, maxBytes);
      if (data !== undefined) return { value: data, problems: [] };
      return { value: undefined, problems: [this.problem(about, 'ENTRY_MISSING', rest, 'is not in the archive')] };
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      return { value: undefined, problems: [{ what: about.what, ids: about.ids, error }] };
    }
  }

  async json(rest: string, about: About, maxBytes: number): Promise<Loaded<JsonEntry | undefined>> {
    const bytes = await this.bytes(rest, about, maxBytes);
    if (bytes.value === undefined) return { value: undefined, problems: bytes.problems };
    const raw = jsonText(bytes.value);
    try {
      return { value: { value: JSON.parse(raw) as unknown, raw }, problems: [] };
    } catch (error) {
      return { value: undefined, problems: [this.problem(about, 'BAD_JSON', rest, 'is not valid JSON', error)] };
    }
  }

  async object(
    rest: string,
    about: About,
    maxBytes: number = READ_LIMITS.jsonBytes,
  ): Promise<Loaded<{ value: Json; raw: string } | undefined>> {
    const read = await this.json(rest, about, maxBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const value = asObject(read.value.value);
    if (value !== undefined) return { value: { value, raw: read.value.raw }, problems: [] };
    return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, 'is not a JSON object')] };
  }

  /**
   * The ids a list entry names, in either form the service used where it used it: an array, or
   * pages.json's old `{"page1": "name"}` (any list, by the `archived` rule).
   */
  async list(rest: string, list: KindName, kind: IdKind, about: About): Promise<Loaded<string[] | undefined>> {
    const read = await this.json(rest, about, READ_LIMITS.jsonBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const value = read.value.value;
    const objectForm = this.rule === 'archived' || RESOURCE_KINDS[list].objectForm === true;
    const object = objectForm ? asObject(value) : undefined;
    const items = Array.isArray(value) ? value : object && Object.keys(object);
    if (items === undefined)
      return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, `is not a list of ${kind} ids`)] };
    const problems: EntryProblem[] = [];
    return { value: this.idsIn(items, kind, rest, about, problems), problems };
  }

  /**
   * The ids `items` names that are ids of `kind`, each once. Values that are not are told one by
   * one up to `toldIds`, the rest in one count; ids named again are told once for the list.
   */
  idsIn(items: readonly unknown[], kind: IdKind, rest: string, about: About, problems: EntryProblem[]): string[] {
    const ids: string[] = [];
    const seen = new Set<string>();
    const again: string[] = [];
    let rejected = 0;
    for (const item of items) {
      const id = this.idOf(kind, item);
      if (id === undefined) {
        if (rejected++ < READ_LIMITS.toldIds) problems.push(this.notAnId(item, kind, rest, about));
      } else if (seen.has(id)) again.push(id);
      else {
        seen.add(id);
        ids.push(id);
      }
    }
    if (rejected > READ_LIMITS.toldIds) {
      const more = `lists ${rejected - READ_LIMITS.toldIds} more values that are no ${kind} ids`;
      problems.push(this.problem(about, 'BAD_ID', rest, more));
    }
    if (again.length > 0) {
      const named = [...new Set(again)].slice(0, 3).join(', ');
      const message = `lists ${named}${again.length > 3 ? ' and others' : ''} more than once; each is read once`;
      problems.push(this.problem(about, 'DUPLICATE_ENTRY', rest, message));
    }
    return ids;
  }

  /** The id `raw` is, by the rule; undefined for a value that is no id of `kind`. */
  idOf(kind: IdKind, raw: unknown): string | undefined {
    if (this.rule === 'service') return normalizeId(kind, raw);
    const id = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
    return id !== undefined && isArchivedId(id) ? id : undefined;
  }

  private notAnId(item: unknown, kind: IdKind, rest: string, about: About): EntryProblem {
    const shown = typeof item === 'string' && item.length <= 80 ? item : describe(item);
    const what = `${kind} ${shown}${about.of === undefined ? '' : ` of ${about.of}`}`;
    return this.problem({ ...about, what }, 'BAD_ID', rest, `lists ${describe(item)}, which is not a ${kind} id`);
  }

  private problem(about: About, code: ErrorCode, rest: string, message: string, cause?: unknown): EntryProblem {
    const entry = this.entryName(rest);
    return { what: about.what, ids: about.ids, error: new RabbitError(code, `${entry} ${message}`, { entry, cause }) };
  }
}
