import { KeyRing } from './auth.js';
import type {
  DatasetOptions,
  DiscussionEntry,
  DiscussionRecord,
  ElementRecord,
  IntegerId,
  LayerRecord,
  PageRecord,
  PrototypeHead,
  PrototypeRecord,
} from './model.js';
import { newPrototype, parentKindOf, SYSTEM_USER } from './model.js';
import { RenderedCache } from './lru.js';
import type { Representation } from './payload.js';
import { PlannedPrototypes } from './planned-prototypes.js';
import { buildAwkwardPrototypes, FIRST_ORDINARY_ID } from './sample-data.js';

const RENDERED_BUDGET_BYTES = 8 * 1024 * 1024;

/**
 * The account's data and every way to change it. HTTP writes and tests go through the same
 * mutation methods, so both see one notion of "a change": the prototype's lastModification moves
 * forward, an 'autosaved' milestone is appended and its rendered bodies are dropped.
 * Ordinary prototypes are only planned until something needs them whole (a write): a big
 * account is served a page at a time from the seed, never built up front.
 */
export class FakeStore {
  readonly keyRing: KeyRing;
  /** Every prototype in list order: its records once built or written, null while only planned. */
  private readonly prototypes = new Map<string, PrototypeRecord | null>();
  private readonly planned: PlannedPrototypes;
  private readonly bodies = new RenderedCache(RENDERED_BUDGET_BYTES);
  private listModified = 0;
  private nextDiscussionId: number;

  constructor(
    readonly seed: number,
    readonly dataset: Readonly<DatasetOptions>,
    private readonly now: () => number,
  ) {
    const awkward = buildAwkwardPrototypes(seed, dataset);
    for (const proto of awkward.prototypes) this.prototypes.set(String(proto.id), proto);
    for (let i = 0; i < dataset.prototypes; i++) this.prototypes.set(String(FIRST_ORDINARY_ID + i), null);
    this.planned = new PlannedPrototypes(seed, dataset, awkward.nextDiscussionId);
    this.nextDiscussionId = awkward.nextDiscussionId + dataset.prototypes * this.planned.discussionsEach;
    this.keyRing = new KeyRing(seed, [...this.prototypes.keys()]);
  }

  prototypeIds(): string[] {
    return [...this.prototypes.keys()];
  }

  /**
   * The prototype as plain records that stay: a generated one is built in full here and kept from
   * then on (writes and tests use this). Reads that serve requests use `head` and `page` instead.
   */
  prototype(id: string | IntegerId): PrototypeRecord | undefined {
    const key = String(id);
    const record = this.prototypes.get(key);
    if (record !== null) return record;
    const built = this.planned.build(key);
    this.prototypes.set(key, built);
    return built;
  }

  /** Everything of a prototype but its pages, without generating them. */
  head(id: string | IntegerId): PrototypeHead | undefined {
    const record = this.prototypes.get(String(id));
    return record === null ? this.planned.head(String(id)) : record;
  }

  pageIds(protoId: string | IntegerId): string[] | undefined {
    const record = this.prototypes.get(String(protoId));
    return record === null ? this.planned.pageIds(String(protoId)) : record?.pages.map((page) => page.id);
  }

  page(protoId: string | IntegerId, pageId: string): PageRecord | undefined {
    const record = this.prototypes.get(String(protoId));
    return record === null
      ? this.planned.page(String(protoId), pageId)
      : record?.pages.find((page) => page.id === pageId);
  }

  /** The ids of a page's elements; a planned page is not generated for them. */
  pageElementIds(protoId: string | IntegerId, pageId: string): string[] | undefined {
    const record = this.prototypes.get(String(protoId));
    if (record === null) return this.planned.elementIds(String(protoId), pageId);
    return record?.pages.find((page) => page.id === pageId)?.elements.map((element) => element.id);
  }

  pageElementCount(protoId: string | IntegerId, pageId: string): number | undefined {
    const record = this.prototypes.get(String(protoId));
    if (record === null) return this.planned.elementCount(String(protoId), pageId);
    return record?.pages.find((page) => page.id === pageId)?.elements.length;
  }

  layer(protoId: string | IntegerId, layerId: string): LayerRecord | undefined {
    return this.head(protoId)?.layers.find((layer) => layer.id === layerId);
  }

  /** The page or layer that holds elements, by its id (`page…` or `layer…`). */
  parent(protoId: string | IntegerId, parentId: string): PageRecord | LayerRecord | undefined {
    const kind = parentKindOf(parentId);
    if (kind === 'page') return this.page(protoId, parentId);
    return kind === 'layer' ? this.layer(protoId, parentId) : undefined;
  }

  element(protoId: string | IntegerId, parentId: string, elementId: string): ElementRecord | undefined {
    return this.parent(protoId, parentId)?.elements.find((element) => element.id === elementId);
  }

  discussion(protoId: string | IntegerId, discussionId: string | IntegerId): DiscussionRecord | undefined {
    return this.head(protoId)?.discussions.find((d) => String(d.id) === String(discussionId));
  }

  /** Last-Modified of the prototypes list as one key sees it. */
  listLastModified(visible: readonly string[]): number {
    let latest = this.listModified;
    for (const id of visible) latest = Math.max(latest, this.head(id)?.lastModification ?? 0);
    return latest;
  }

  /** Rendered bodies are built once per state of a prototype (or of the list, under null), within a memory budget. */
  cached(protoId: string | null, key: string, build: () => Representation): Representation {
    return this.bodies.get(protoId ?? '', key, build);
  }

  addPrototype(name: string): number {
    let id = 1;
    // Ids past 2^53 (bigIds) are left out: the next id after them is not a number a test can hold.
    for (const key of this.prototypes.keys()) if (Number.isSafeInteger(Number(key))) id = Math.max(id, Number(key) + 1);
    const proto = newPrototype(id, name, SYSTEM_USER.name, 0);
    this.prototypes.set(String(id), proto);
    this.keyRing.addPrototype(String(id));
    this.change(proto);
    this.listModified = proto.lastModification;
    return id;
  }

  deletePrototype(id: string | IntegerId): void {
    const proto = this.require(id);
    this.prototypes.delete(String(id));
    this.bodies.dropScope(String(id));
    this.listModified = this.nextTimestamp(Math.max(this.listModified, proto.lastModification));
    this.bodies.dropScope('');
  }

  renamePrototype(id: string | IntegerId, name: string): void {
    const proto = this.require(id);
    proto.name = name;
    this.change(proto);
  }

  renamePage(protoId: string | IntegerId, pageId: string, name: string): void {
    const proto = this.require(protoId);
    const page = proto.pages.find((p) => p.id === pageId);
    if (page === undefined) throw new RangeError(`no page ${pageId} in prototype ${protoId}`);
    page.name = name;
    this.change(proto);
  }

  addPage(protoId: string | IntegerId, name: string, layers: string[] = []): string {
    const proto = this.require(protoId);
    const id = `page${Math.max(0, ...proto.pages.map((page) => Number(page.id.slice(4)))) + 1}`;
    proto.pages.push({ id, name, layers: [...layers], elements: [] });
    this.change(proto);
    return id;
  }

  addLayer(protoId: string | IntegerId, name: string): string {
    const proto = this.require(protoId);
    const id = `layer${Math.max(0, ...proto.layers.map((layer) => Number(layer.id.slice(5)))) + 1}`;
    proto.layers.push({ id, name, elements: [] });
    this.change(proto);
    return id;
  }

  /** Creates an element; `type` is required, as for the API's create. */
  addElement(protoId: string | IntegerId, parentId: string, attrs: Record<string, unknown>): ElementRecord {
    const proto = this.require(protoId);
    const parent = this.requireParent(protoId, parentId);
    if (typeof attrs.type !== 'string' || attrs.type === '') throw new TypeError('an element needs a string type');
    const { id: _ignored, ...rest } = attrs;
    const element: ElementRecord = { id: `element${proto.nextElement++}`, type: attrs.type, ...rest };
    parent.elements.push(element);
    this.change(proto);
    return element;
  }

  /** Attributes left out keep their values (service-api.md 4.4 rule 1); the id never changes. */
  updateElement(
    protoId: string | IntegerId,
    parentId: string,
    elementId: string,
    attrs: Record<string, unknown>,
  ): ElementRecord {
    const proto = this.require(protoId);
    const element = this.requireParent(protoId, parentId).elements.find((e) => e.id === elementId);
    if (element === undefined) throw new RangeError(`no element ${elementId} on ${parentId}`);
    if ('type' in attrs && (typeof attrs.type !== 'string' || attrs.type === '')) {
      throw new TypeError('an element type must be a non-empty string');
    }
    for (const [name, value] of Object.entries(attrs)) {
      if (name !== 'id') element[name] = value;
    }
    this.change(proto);
    return element;
  }

  deleteElement(protoId: string | IntegerId, parentId: string, elementId: string): void {
    const proto = this.require(protoId);
    const parent = this.requireParent(protoId, parentId);
    const index = parent.elements.findIndex((e) => e.id === elementId);
    if (index < 0) throw new RangeError(`no element ${elementId} on ${parentId}`);
    parent.elements.splice(index, 1);
    this.change(proto);
  }

  addDiscussion(protoId: string | IntegerId, pageId: string, title: string, author: string): number {
    const proto = this.require(protoId);
    if (this.page(protoId, pageId) === undefined) throw new RangeError(`no page ${pageId}`);
    const timestamp = this.nextTimestamp(proto.lastModification);
    proto.discussions.push({
      id: this.nextDiscussionId++,
      pageId,
      title,
      positionX: 10,
      positionY: 10,
      timestamp,
      entries: [{ timestamp, author, text: `set the title to "${title}"` }],
      readAt: 0,
    });
    this.change(proto);
    return this.nextDiscussionId - 1;
  }

  addDiscussionEntry(
    protoId: string | IntegerId,
    discussionId: IntegerId,
    author: string,
    text: string,
  ): DiscussionEntry {
    const proto = this.require(protoId);
    const discussion = this.discussion(protoId, discussionId);
    if (discussion === undefined) throw new RangeError(`no discussion ${discussionId}`);
    const entry = { timestamp: this.nextTimestamp(proto.lastModification), author, text };
    discussion.entries.push(entry);
    this.change(proto);
    return entry;
  }

  /** A change with no edit, for tests that only need a new revision. */
  touch(protoId: string | IntegerId): void {
    this.change(this.require(protoId));
  }

  private change(proto: PrototypeRecord): void {
    proto.lastModification = this.nextTimestamp(proto.lastModification);
    const highest = Math.max(0, ...proto.milestones.map((m) => m.revision));
    proto.milestones.push({
      revision: highest + 1,
      created: String(proto.lastModification),
      name: 'autosaved',
      user: { ...SYSTEM_USER },
    });
    this.bodies.dropScope(String(proto.id));
    this.bodies.dropScope('');
  }

  /**
   * At least one whole second after `previous`: Last-Modified has second resolution, and a change
   * within the same second would otherwise be answered 304 to a client that already has the old body.
   */
  private nextTimestamp(previous: number): number {
    return Math.max(this.now(), (Math.floor(previous / 1000) + 1) * 1000);
  }

  private require(id: string | IntegerId): PrototypeRecord {
    const proto = this.prototype(id);
    if (proto === undefined) throw new RangeError(`no prototype ${id}`);
    return proto;
  }

  private requireParent(protoId: string | IntegerId, parentId: string): PageRecord | LayerRecord {
    const parent = this.parent(protoId, parentId);
    if (parent === undefined) throw new RangeError(`no page or layer ${parentId} in prototype ${protoId}`);
    return parent;
  }
}
