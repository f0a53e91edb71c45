import { inOrder, readAhead } from '../core/in-order.js';
import { compareIds } from '../api/ids.js';
import { milestonesOf } from '../api/revision.js';
import {
  elementEntriesOf,
  parseRevisionEntry,
  revisionEntryNameOf,
  revisionEntryPrefix,
  type ParsedPath,
} from '../api/entry-paths.js';
import type { ElementParent } from '../api/reader-names.js';
import type { KindName } from '../api/resource-kinds.js';
import {
  asObject,
  discussionOf,
  elementTextOf,
  finite,
  text,
  timeOf,
  type DiscussionRecord,
  type ElementRecord,
  type LayerRecord,
  type PageRecord,
  type PrototypeMeta,
} from './archived-records.js';
import {
  EntryReads,
  NO_PROBLEMS,
  READ_LIMITS,
  type About,
  type EntryProblem,
  type IdRule,
  type Loaded,
  type PrototypeEntries,
} from './prototype-entry-reads.js';

export { READ_LIMITS, type EntryProblem, type PrototypeEntries } from './prototype-entry-reads.js';

export interface ReaderOptions {
  /** Hears each problem: as each read completes, and in their records' order from `pages`, `elements` and `discussions`. */
  onProblem?(problem: EntryProblem): void;
  /** Which ids are taken (see IdRule): `archived` by default. */
  ids?: IdRule;
}

const LISTS = { page: 'page-list', layer: 'layer-list' } as const satisfies Record<string, KindName>;

/**
 * The one reader of an archived prototype's JSON entries (prototype.json, its pages, layers,
 * elements and discussions) for every command that reads them: convert, search, the overview the
 * export writes, restore. What it reads is someone's archive: every entry is read within a bound,
 * every id a list names is checked before it becomes an entry name, every field is checked for its
 * type (prototype-entry-reads.ts, archived-records.ts), and whatever is missing, damaged or of the
 * wrong shape is told (`onProblem`) and left out, never fatal. Memory holds ids and a window of
 * `READ_LIMITS.readAhead` entries, whatever the number of pages or elements.
 */
export class ArchivedPrototypeReader {
  private readonly reads: EntryReads;

  constructor(
    private readonly source: PrototypeEntries,
    private readonly options: ReaderOptions = {},
  ) {
    this.reads = new EntryReads(source, options.ids);
  }

  /** The entry's full name in the archive, as messages name it. */
  entryName(rest: string): string {
    return this.reads.entryName(rest);
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
    return this.told(await this.reads.bytes(rest, { what, ids: {} }, maxBytes));
  }

  /** prototype.json: the prototype's name, last change and milestones, in revision order. */
  async meta(): Promise<PrototypeMeta> {
    const about = { what: 'the prototype metadata', ids: {} };
    const rest = revisionEntryNameOf('prototype', {});
    const value = this.told(this.reads.object(await this.reads.json(rest, about), rest, about))?.value;
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
    const about = { what: `the list of ${kind}s`, ids: {} };
    const rest = revisionEntryNameOf(list, {});
    return this.told(this.reads.list(await this.reads.json(rest, about), rest, list, kind, about));
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
  pages(ids: readonly string[]): AsyncGenerator<PageRecord> {
    return this.records(
      () => ids,
      (id) => this.loadPage(id),
    );
  }

  async layer(id: string): Promise<LayerRecord> {
    const about = { what: `layer ${id}`, ids: { layer: id } };
    const rest = revisionEntryNameOf('layer', { layer: id });
    const value = this.told(this.reads.object(await this.reads.json(rest, about), rest, about))?.value;
    return { id, name: text(value?.name) };
  }

  /** The ids a page's or layer's element list names, each once; undefined (told) when it cannot be read. */
  async elementIds(parent: ElementParent, id: string): Promise<string[] | undefined> {
    const { rest, list, about } = elementList(parent, id);
    return this.told(this.reads.list(await this.reads.json(rest, about), rest, list, 'element', about));
  }

  /**
   * How many elements a page's or layer's list names, as the overview shows it; undefined (told)
   * when it cannot be read as a list. Counted, not checked: no id of it becomes a name, and the
   * export's overview counts every list of the account on its way out.
   */
  async elementCount(parent: ElementParent, id: string): Promise<number | undefined> {
    const { rest, list, about } = elementList(parent, id);
    return this.told(this.reads.count(await this.reads.json(rest, about), rest, list, 'element', about));
  }

  /**
   * A page's or layer's elements (those its list names, or `ids`), `readAhead` at a time, in list
   * order: one that cannot be read, or is not a JSON object, is told and left out.
   */
  elements(parent: ElementParent, id: string, ids?: readonly string[]): AsyncGenerator<ElementRecord> {
    const names = elementEntriesOf(parent, id);
    const listed = async () => ids ?? (await this.elementIds(parent, id)) ?? [];
    return this.records(listed, (element) => this.loadElement(names.element(element), element, parent, id));
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
  discussions(ids?: readonly string[]): AsyncGenerator<DiscussionRecord> {
    return this.records(
      async () => ids ?? (await this.discussionIds()),
      (id) => this.loadDiscussion(id),
    );
  }

  /**
   * The records of `items` (asked for at the first record), read `readAhead` at a time
   * (core/in-order.ts), what each read met told at its record's turn; those read as nothing are
   * left out. One generator between the reads and the caller: each one a record passes through
   * costs it turns of the event loop.
   */
  private async *records<T, R>(
    items: () => readonly T[] | Promise<readonly T[]>,
    load: (item: T) => Promise<Loaded<R | undefined>>,
  ): AsyncGenerator<R> {
    const results = readAhead(await items(), READ_LIMITS.readAhead, load);
    for (let result = results.next(); result !== undefined; result = results.next()) {
      const record = this.told(await result);
      if (record !== undefined) yield record;
    }
  }

  /** Tells what the read met, and hands over what it found. */
  private told<T>(loaded: Loaded<T>): T {
    for (const problem of loaded.problems) this.options.onProblem?.(problem);
    return loaded.value;
  }

  private async loadPage(id: string): Promise<Loaded<PageRecord>> {
    const about = { what: `page ${id}`, ids: { page: id } };
    const rest = revisionEntryNameOf('page', { page: id });
    const { value, problems } = this.reads.object(await this.reads.json(rest, about), rest, about);
    const layers = value?.value.layers;
    const checked = Array.isArray(layers) ? this.reads.idsIn(layers, 'layer', rest, about) : undefined;
    const page = { id, name: text(value?.value.name), layerIds: checked?.value ?? [] };
    return { value: page, problems: checked === undefined ? problems : [...problems, ...checked.problems] };
  }

  private async loadElement(
    rest: string,
    id: string,
    parentKind: ElementParent,
    parent: string,
  ): Promise<Loaded<ElementRecord | undefined>> {
    const about = () => ({
      what: `element ${id} of ${parentKind} ${parent}`,
      ids: { [parentKind]: parent, element: id },
    });
    const read = this.reads.object(await this.reads.json(rest, about, READ_LIMITS.elementBytes), rest, about);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const { value, raw } = read.value;
    return { value: { id, entry: rest, raw, value, text: elementTextOf(value) }, problems: NO_PROBLEMS };
  }

  private async loadDiscussion(id: string): Promise<Loaded<DiscussionRecord | undefined>> {
    const about = { what: `discussion ${id}`, ids: { discussion: id } };
    const rest = revisionEntryNameOf('discussion', { discussion: id });
    const read = this.reads.object(await this.reads.json(rest, about), rest, about);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const pageId = read.value.value.pageId;
    const page = typeof pageId === 'string' ? (this.reads.idOf('page', pageId) ?? null) : null;
    return { value: discussionOf(id, read.value.raw, read.value.value, page), problems: [] };
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

/** A page's or layer's element list: its entry, its kind, and what its problems are told as. */
function elementList(parent: ElementParent, id: string): { rest: string; list: KindName; about: About } {
  return {
    rest: elementEntriesOf(parent, id).list,
    list: parent === 'page' ? 'page-element-list' : 'layer-element-list',
    about: { what: `the elements of ${parent} ${id}`, ids: { [parent]: id }, of: `${parent} ${id}` },
  };
}
