import { isRabbitError, RabbitError, type ErrorCode } from '../core/errors.js';
import { inOrder } from '../core/in-order.js';
import { isArchivedId } from '../api/archived-ids.js';
import { compareIds, describe, normalizeId, type IdKind } from '../api/ids.js';
import { jsonText } from '../api/json-body.js';
import { milestonesOf } from '../api/revision.js';
import {
  elementEntriesOf,
  parseRevisionEntry,
  revisionEntryNameOf,
  revisionEntryPrefix,
  revisionFolderOf,
  type ParsedPath,
  type PathIds,
} from '../api/entry-paths.js';
import type { ElementParent } from '../api/reader-names.js';
import { RESOURCE_KINDS, type KindName } from '../api/resource-kinds.js';
import {
  asObject,
  discussionOf,
  elementTextOf,
  finite,
  text,
  timeOf,
  type DiscussionRecord,
  type ElementRecord,
  type Json,
  type LayerRecord,
  type PageRecord,
  type PrototypeMeta,
} from './archived-records.js';

/**
 * The one reader of an archived prototype's JSON entries (prototype.json, its pages, layers,
 * elements and discussions) for every command that reads them: convert, search, the overview the
 * export writes, restore. What it reads is someone's archive: every entry is read within a bound,
 * every id a list names is checked before it becomes an entry name, every field is checked for its
 * type, and whatever is missing, damaged or of the wrong shape is told (`onProblem`) and left out,
 * never fatal. Memory holds ids and a window of `readAhead` entries, whatever the number of pages
 * or elements.
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

export interface ReaderOptions {
  /** Hears each problem: as each read completes, and in their records' order from `pages`, `elements` and `discussions`. */
  onProblem?(problem: EntryProblem): void;
  /**
   * Which ids are taken: `archived` (the default), any of letters and digits, as commands that show
   * what an archive holds take them; `service`, only the service's shapes (`page12`, `layer3`) and
   * lists in the forms the service sent, for restore, which puts them in requests.
   */
  ids?: 'archived' | 'service';
}

export interface JsonEntry {
  value: unknown;
  /** The entry's text exactly as archived (a leading byte-order mark aside). */
  raw: string;
}

/** What a reader tells of an entry: what is lost with it, and the ids of what holds it. */
interface About {
  what: string;
  ids: PathIds;
  /** For an id a list names: what it is of (`page page1` for an element). */
  of?: string;
}

/** A read and what it told, held until its record's turn (see `ahead`). */
interface Loaded<T> {
  value: T;
  problems: EntryProblem[];
}

const LISTS = { page: 'page-list', layer: 'layer-list' } as const satisfies Record<string, KindName>;

export class ArchivedPrototypeReader {
  constructor(
    private readonly source: PrototypeEntries,
    private readonly options: ReaderOptions = {},
  ) {}

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return revisionFolderOf(this.source.id, this.source.revision) + rest;
  }

  /**
   * `start` for each item, `readAhead` at once, the results handed back in the items' order: the
   * one window every reader of many entries uses (core/in-order.ts).
   */
  ahead<T, R>(items: readonly T[], start: (item: T) => Promise<R>): AsyncGenerator<[T, R]> {
    return inOrder(items, READ_LIMITS.readAhead, start);
  }

  /** The entry's bytes, or undefined (told) when it is missing, damaged or larger than `maxBytes`. */
  async bytes(rest: string, what: string, maxBytes: number): Promise<Buffer | undefined> {
    return this.told(await this.load(rest, { what, ids: {} }, maxBytes));
  }

  /** The entry's JSON, or undefined (told) when it cannot be read or parsed. */
  async json(rest: string, what: string): Promise<JsonEntry | undefined> {
    return this.told(await this.loadJson(rest, { what, ids: {} }, READ_LIMITS.jsonBytes));
  }

  /** prototype.json: the prototype's name, last change and milestones, in revision order. */
  async meta(): Promise<PrototypeMeta> {
    const about = { what: 'the prototype metadata', ids: {} };
    const value = this.told(await this.loadObject(revisionEntryNameOf('prototype', {}), about))?.value;
    const data = asObject(value?.prototypeData);
    const milestones = milestonesOf(value).map((m) => ({
      revision: m.revision,
      name: text(m.name) ?? '',
      created: timeOf(m.created),
      user: text(asObject(m.user)?.name),
    }));
    return {
      name: text(data?.name),
      lastModification: finite(data?.lastModification),
      lastUser: text(data?.lastUser),
      milestones: milestones.sort((a, b) => a.revision - b.revision),
    };
  }

  /** The ids pages.json or layers.json lists, each once; undefined (told) when it cannot be read as a list. */
  async listed(kind: 'page' | 'layer'): Promise<string[] | undefined> {
    const list = LISTS[kind];
    return this.told(
      await this.loadList(revisionEntryNameOf(list, {}), list, kind, { what: `the list of ${kind}s`, ids: {} }),
    );
  }

  /**
   * The page ids in the order of pages.json. Without a usable one (`listed` false), the pages whose
   * entry (`pages/{id}.json`) the archive holds, in id order: a page's JSON has no place of its own.
   */
  async pageOrder(): Promise<{ ids: string[]; listed: boolean }> {
    const listed = await this.listed('page');
    if (listed !== undefined) return { ids: listed, listed: true };
    const ids: string[] = [];
    for await (const entry of this.entriesOf('page')) ids.push(entry.page as string);
    return { ids: ids.sort(compareIds), listed: false };
  }

  /** A page's name and the layers it shows (checked ids, each once); a page without its JSON has neither. */
  async page(id: string): Promise<PageRecord> {
    return this.told(await this.loadPage(id));
  }

  /** The pages, `readAhead` at a time, in the order of `ids`. */
  async *pages(ids: readonly string[]): AsyncGenerator<PageRecord> {
    for await (const [, loaded] of this.ahead(ids, (id) => this.loadPage(id))) yield this.told(loaded);
  }

  async layer(id: string): Promise<LayerRecord> {
    const about = { what: `layer ${id}`, ids: { layer: id } };
    const value = this.told(await this.loadObject(revisionEntryNameOf('layer', { layer: id }), about))?.value;
    return { id, name: text(value?.name) };
  }

  /** The ids a page's or layer's element list names, each once; undefined (told) when it cannot be read. */
  async elementIds(parent: ElementParent, id: string): Promise<string[] | undefined> {
    const about = { what: `the elements of ${parent} ${id}`, ids: { [parent]: id }, of: `${parent} ${id}` };
    const list = parent === 'page' ? 'page-element-list' : 'layer-element-list';
    return this.told(await this.loadList(elementEntriesOf(parent, id).list, list, 'element', about));
  }

  /**
   * A page's or layer's elements (those its list names, or `ids`), `readAhead` at a time, in list
   * order: one that cannot be read, or is not a JSON object, is told and left out.
   */
  async *elements(parent: ElementParent, id: string, ids?: readonly string[]): AsyncGenerator<ElementRecord> {
    const names = elementEntriesOf(parent, id);
    const listed = ids ?? (await this.elementIds(parent, id)) ?? [];
    const read = (element: string) => this.loadElement(names.element(element), element, { [parent]: id }, parent);
    for await (const [, loaded] of this.ahead(listed, read)) {
      const element = this.told(loaded);
      if (element !== undefined) yield element;
    }
  }

  /** The ids of the discussions the prototype holds, in id order: read from the entries' names. */
  async discussionIds(): Promise<string[]> {
    const ids: string[] = [];
    for await (const entry of this.entriesOf('discussion')) ids.push(entry.discussion as string);
    return ids.sort(compareIds);
  }

  /**
   * Every discussion (or those of `ids`, for a caller that has them already), `readAhead` at a
   * time, in id order; one that cannot be read is told and left out.
   */
  async *discussions(ids?: readonly string[]): AsyncGenerator<DiscussionRecord> {
    const listed = ids ?? (await this.discussionIds());
    for await (const [, loaded] of this.ahead(listed, (id) => this.loadDiscussion(id))) {
      const discussion = this.told(loaded);
      if (discussion !== undefined) yield discussion;
    }
  }

  /** Tells what the read told, and hands over its value. */
  private told<T>(loaded: Loaded<T>): T {
    for (const problem of loaded.problems) this.options.onProblem?.(problem);
    return loaded.value;
  }

  private problem(about: About, code: ErrorCode, rest: string, message: string, cause?: unknown): EntryProblem {
    const entry = this.entryName(rest);
    return { what: about.what, ids: about.ids, error: new RabbitError(code, `${entry} ${message}`, { entry, cause }) };
  }

  private async load(rest: string, about: About, maxBytes: number): Promise<Loaded<Buffer | undefined>> {
    try {
      const data = await this.source.read(rest, maxBytes);
      if (data !== undefined) return { value: data, problems: [] };
      return { value: undefined, problems: [this.problem(about, 'ENTRY_MISSING', rest, 'is not in the archive')] };
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      return { value: undefined, problems: [{ what: about.what, ids: about.ids, error }] };
    }
  }

  private async loadJson(rest: string, about: About, maxBytes: number): Promise<Loaded<JsonEntry | undefined>> {
    const bytes = await this.load(rest, about, maxBytes);
    if (bytes.value === undefined) return { value: undefined, problems: bytes.problems };
    const raw = jsonText(bytes.value);
    try {
      return { value: { value: JSON.parse(raw) as unknown, raw }, problems: [] };
    } catch (error) {
      return { value: undefined, problems: [this.problem(about, 'BAD_JSON', rest, 'is not valid JSON', error)] };
    }
  }

  private async loadObject(
    rest: string,
    about: About,
    maxBytes: number = READ_LIMITS.jsonBytes,
  ): Promise<Loaded<{ value: Json; raw: string } | undefined>> {
    const read = await this.loadJson(rest, about, maxBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const value = asObject(read.value.value);
    if (value !== undefined) return { value: { value, raw: read.value.raw }, problems: [] };
    return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, 'is not a JSON object')] };
  }

  /** A list of ids in either form the service used where it used it (an array, or pages.json's `{"page1": "name"}`). */
  private async loadList(
    rest: string,
    list: KindName,
    kind: IdKind,
    about: About,
  ): Promise<Loaded<string[] | undefined>> {
    const read = await this.loadJson(rest, about, READ_LIMITS.jsonBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const value = read.value.value;
    const objectForm = this.options.ids !== 'service' || RESOURCE_KINDS[list].objectForm === true;
    const object = objectForm ? asObject(value) : undefined;
    const items = Array.isArray(value) ? value : object && Object.keys(object);
    if (items === undefined)
      return { value: undefined, problems: [this.problem(about, 'BAD_SHAPE', rest, `is not a list of ${kind} ids`)] };
    const problems: EntryProblem[] = [];
    return { value: this.idsIn(items, kind, rest, about, problems), problems };
  }

  private async loadPage(id: string): Promise<Loaded<PageRecord>> {
    const about = { what: `page ${id}`, ids: { page: id } };
    const rest = revisionEntryNameOf('page', { page: id });
    const { value, problems } = await this.loadObject(rest, about);
    const layers = value?.value.layers;
    const layerIds = Array.isArray(layers) ? this.idsIn(layers, 'layer', rest, about, problems) : [];
    return { value: { id, name: text(value?.value.name), layerIds }, problems };
  }

  private async loadElement(
    rest: string,
    id: string,
    parent: PathIds,
    parentKind: ElementParent,
  ): Promise<Loaded<ElementRecord | undefined>> {
    const about = { what: `element ${id} of ${parentKind} ${parent[parentKind]}`, ids: { ...parent, element: id } };
    const read = await this.loadObject(rest, about, READ_LIMITS.elementBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const { value, raw } = read.value;
    return { value: { id, entry: rest, raw, value, text: elementTextOf(value) }, problems: [] };
  }

  private async loadDiscussion(id: string): Promise<Loaded<DiscussionRecord | undefined>> {
    const about = { what: `discussion ${id}`, ids: { discussion: id } };
    const read = await this.loadObject(revisionEntryNameOf('discussion', { discussion: id }), about);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const pageId = read.value.value.pageId;
    const page = this.idOf('page', pageId) === undefined ? null : (pageId as string);
    return { value: discussionOf(id, read.value.raw, read.value.value, page), problems: [] };
  }

  /**
   * The ids `items` names that are ids of `kind`, each once. Values that are not are told one by
   * one up to `toldIds`, the rest in one count; ids named again are told once for the list.
   */
  private idsIn(
    items: readonly unknown[],
    kind: IdKind,
    rest: string,
    about: About,
    problems: EntryProblem[],
  ): string[] {
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

  private notAnId(item: unknown, kind: IdKind, rest: string, about: About): EntryProblem {
    const shown = typeof item === 'string' && item.length <= 80 ? item : describe(item);
    const what = `${kind} ${shown}${about.of === undefined ? '' : ` of ${about.of}`}`;
    return this.problem({ ...about, what }, 'BAD_ID', rest, `lists ${describe(item)}, which is not a ${kind} id`);
  }

  /** The id `raw` is, by the rule of `options.ids`; undefined for a value that is no id of `kind`. */
  private idOf(kind: IdKind, raw: unknown): string | undefined {
    if (this.options.ids === 'service') return normalizeId(kind, raw);
    const id = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
    return id !== undefined && isArchivedId(id) ? id : undefined;
  }

  /** The entries of one kind, parsed: only names that can be of the kind are parsed. */
  private async *entriesOf(kind: KindName): AsyncGenerator<ParsedPath> {
    const prefix = revisionEntryPrefix(kind);
    for await (const rest of this.source.names()) {
      if (!rest.startsWith(prefix)) continue;
      const entry = parseRevisionEntry(rest);
      if (entry?.kind === kind) yield entry;
    }
  }
}
