import { inOrder } from '../core/in-order.js';
import { compareIds } from '../api/ids.js';
import { milestonesOf } from '../api/revision.js';
import {
  elementEntriesOf,
  parseRevisionEntry,
  revisionEntryNameOf,
  revisionEntryPrefix,
  type ParsedPath,
  type PathIds,
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
  READ_LIMITS,
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
    const value = this.told(await this.reads.object(revisionEntryNameOf('prototype', {}), about))?.value;
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
    return this.told(await this.reads.list(revisionEntryNameOf(list, {}), list, kind, about));
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
    const value = this.told(await this.reads.object(revisionEntryNameOf('layer', { layer: id }), about))?.value;
    return { id, name: text(value?.name) };
  }

  /** The ids a page's or layer's element list names, each once; undefined (told) when it cannot be read. */
  async elementIds(parent: ElementParent, id: string): Promise<string[] | undefined> {
    const about = { what: `the elements of ${parent} ${id}`, ids: { [parent]: id }, of: `${parent} ${id}` };
    const list = parent === 'page' ? 'page-element-list' : 'layer-element-list';
    return this.told(await this.reads.list(elementEntriesOf(parent, id).list, list, 'element', about));
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

  /** Tells what the read met, and hands over what it found. */
  private told<T>(loaded: Loaded<T>): T {
    for (const problem of loaded.problems) this.options.onProblem?.(problem);
    return loaded.value;
  }

  private async loadPage(id: string): Promise<Loaded<PageRecord>> {
    const about = { what: `page ${id}`, ids: { page: id } };
    const rest = revisionEntryNameOf('page', { page: id });
    const { value, problems } = await this.reads.object(rest, about);
    const layers = value?.value.layers;
    const layerIds = Array.isArray(layers) ? this.reads.idsIn(layers, 'layer', rest, about, problems) : [];
    return { value: { id, name: text(value?.value.name), layerIds }, problems };
  }

  private async loadElement(
    rest: string,
    id: string,
    parent: PathIds,
    parentKind: ElementParent,
  ): Promise<Loaded<ElementRecord | undefined>> {
    const about = { what: `element ${id} of ${parentKind} ${parent[parentKind]}`, ids: { ...parent, element: id } };
    const read = await this.reads.object(rest, about, READ_LIMITS.elementBytes);
    if (read.value === undefined) return { value: undefined, problems: read.problems };
    const { value, raw } = read.value;
    return { value: { id, entry: rest, raw, value, text: elementTextOf(value) }, problems: [] };
  }

  private async loadDiscussion(id: string): Promise<Loaded<DiscussionRecord | undefined>> {
    const about = { what: `discussion ${id}`, ids: { discussion: id } };
    const read = await this.reads.object(revisionEntryNameOf('discussion', { discussion: id }), about);
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
