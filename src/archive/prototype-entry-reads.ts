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

/** An About, or how to make one should a problem need it: an element's is made for none of the thousands read whole. */
export type AboutOf = About | (() => About);

/** What a read found, and the problems it met on the way. */
export interface Loaded<T> {
  value: T;
  problems: readonly EntryProblem[];
}

/** The problems of a read that met none, shared: reads come by the hundred thousand. */
export const NO_PROBLEMS: readonly EntryProblem[] = [];

export interface JsonEntry {
  value: unknown;
  /** The entry's text exactly as archived (a leading byte-order mark aside). */
  raw: string;
}

export interface ObjectEntry extends JsonEntry {
  value: Json;
}

/** Lists up to this long are searched for an id named again rather than kept in a Set. */
const SHORT_LIST = 32;

export class EntryReads {
  constructor(
    private readonly source: PrototypeEntries,
    private readonly rule: IdRule = 'archived',
  ) {}

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return revisionFolderOf(this.source.id, this.source.revision) + rest;
  }

  async bytes(rest: string, about: AboutOf, maxBytes: number): Promise<Loaded<Buffer | undefined>> {
    try {
      const data = await this.source.read(rest, maxBytes);
      return data === undefined ? this.missing(rest, about) : { value: data, problems: NO_PROBLEMS };
    } catch (error) {
      return this.failed(error, about);
    }
  }

  /**
   * The entry's JSON, parsed. Read and parsed in one step, and judged by `object` or `list` in
   * none: the overview reads a few entries a page on the export's way out, and every step of
   * awaiting costs each of them.
   */
  async json(
    rest: string,
    about: AboutOf,
    maxBytes: number = READ_LIMITS.jsonBytes,
  ): Promise<Loaded<JsonEntry | undefined>> {
    let data: Buffer | undefined;
    try {
      data = await this.source.read(rest, maxBytes);
    } catch (error) {
      return this.failed(error, about);
    }
    if (data === undefined) return this.missing(rest, about);
    const raw = jsonText(data);
    try {
      return { value: { value: JSON.parse(raw) as unknown, raw }, problems: NO_PROBLEMS };
    } catch (error) {
      return { value: undefined, problems: [this.problem(about, 'BAD_JSON', rest, 'is not valid JSON', error)] };
    }
  }

  /** The JSON `json` read, if it is an object. */
  object(read: Loaded<JsonEntry | undefined>, rest: string, about: AboutOf): Loaded<ObjectEntry | undefined> {
    if (read.value === undefined || asObject(read.value.value) !== undefined)
      return read as Loaded<ObjectEntry | undefined>;
    return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, 'is not a JSON object')] };
  }

  /**
   * The ids of the list `json` read, in either form the service used where it used it: an array,
   * or pages.json's old `{"page1": "name"}` (any list, by the `archived` rule).
   */
  list(
    read: Loaded<JsonEntry | undefined>,
    rest: string,
    list: KindName,
    kind: IdKind,
    about: About,
  ): Loaded<string[] | undefined> {
    const items = this.items(read, rest, list, kind, about);
    return items.value === undefined
      ? { value: undefined, problems: items.problems }
      : this.idsIn(items.value, kind, rest, about);
  }

  /** How many values the list `json` read names, ids or not: for a count, which puts none of them in a name. */
  count(
    read: Loaded<JsonEntry | undefined>,
    rest: string,
    list: KindName,
    kind: IdKind,
    about: About,
  ): Loaded<number | undefined> {
    const items = this.items(read, rest, list, kind, about);
    return { value: items.value?.length, problems: items.problems };
  }

  /**
   * The ids `items` names that are ids of `kind`, each once. Values that are not are told one by
   * one up to `toldIds`, the rest in one count; ids named again are told once for the list.
   */
  idsIn(items: readonly unknown[], kind: IdKind, rest: string, about: About): Loaded<string[]> {
    const ids: string[] = [];
    const problems: EntryProblem[] = [];
    // Most lists hold a few ids (a page's layers, its elements): looked through, they cost less than a Set.
    const seen = items.length > SHORT_LIST ? new Set<string>() : undefined;
    const again = { named: [] as string[], more: false };
    let rejected = 0;
    for (const item of items) {
      const id = this.idOf(kind, item);
      if (id === undefined) {
        if (rejected++ < READ_LIMITS.toldIds) problems.push(this.notAnId(item, kind, rest, about));
      } else if (seen === undefined ? ids.includes(id) : seen.has(id)) {
        if (again.named.includes(id)) continue;
        if (again.named.length < 3) again.named.push(id);
        else again.more = true;
      } else {
        seen?.add(id);
        ids.push(id);
      }
    }
    if (rejected > READ_LIMITS.toldIds) {
      const more = `lists ${rejected - READ_LIMITS.toldIds} more values that are no ${kind} ids`;
      problems.push(this.problem(about, 'BAD_ID', rest, more));
    }
    if (again.named.length > 0) {
      const named = `${again.named.join(', ')}${again.more ? ' and others' : ''}`;
      problems.push(this.problem(about, 'DUPLICATE_ENTRY', rest, `lists ${named} more than once; each is read once`));
    }
    return { value: ids, problems: problems.length > 0 ? problems : NO_PROBLEMS };
  }

  /** The id `raw` is, by the rule; undefined for a value that is no id of `kind`. */
  idOf(kind: IdKind, raw: unknown): string | undefined {
    if (this.rule === 'service') return normalizeId(kind, raw);
    const id = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
    return id !== undefined && isArchivedId(id) ? id : undefined;
  }

  private items(
    read: Loaded<JsonEntry | undefined>,
    rest: string,
    list: KindName,
    kind: IdKind,
    about: About,
  ): Loaded<readonly unknown[] | undefined> {
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const value = read.value.value;
    const objectForm = this.rule === 'archived' || RESOURCE_KINDS[list].objectForm === true;
    const object = objectForm ? asObject(value) : undefined;
    const items = Array.isArray(value) ? value : object && Object.keys(object);
    if (items !== undefined) return { value: items, problems: NO_PROBLEMS };
    return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, `is not a list of ${kind} ids`)] };
  }

  private missing(rest: string, about: AboutOf): Loaded<undefined> {
    return { value: undefined, problems: [this.problem(about, 'ENTRY_MISSING', rest, 'is not in the archive')] };
  }

  /** A read the source refused: the entry is damaged or too large (its RabbitError); anything else is no archive's. */
  private failed(error: unknown, about: AboutOf): Loaded<undefined> {
    if (!isRabbitError(error)) throw error;
    const { what, ids } = typeof about === 'function' ? about() : about;
    return { value: undefined, problems: [{ what, ids, error }] };
  }

  private notAnId(item: unknown, kind: IdKind, rest: string, about: About): EntryProblem {
    const shown = typeof item === 'string' && item.length <= 80 ? item : describe(item);
    const what = `${kind} ${shown}${about.of === undefined ? '' : ` of ${about.of}`}`;
    return this.problem({ ...about, what }, 'BAD_ID', rest, `lists ${describe(item)}, which is not a ${kind} id`);
  }

  private problem(about: AboutOf, code: ErrorCode, rest: string, message: string, cause?: unknown): EntryProblem {
    const { what, ids } = typeof about === 'function' ? about() : about;
    const entry = this.entryName(rest);
    return { what, ids, error: new RabbitError(code, `${entry} ${message}`, { entry, cause }) };
  }
}
