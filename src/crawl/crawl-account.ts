import { isRabbitError, type RabbitError } from '../core/errors.js';
import { entryPathOf, sourceOf, type PathIds } from '../api/entry-paths.js';
import type { IdKind } from '../api/ids.js';
import { listsNaming } from '../api/kind-lists.js';
import { KIND_NAMES, RESOURCE_KINDS, type KindName } from '../api/resource-kinds.js';
import { currentRevision } from '../api/revision.js';
import type { FetchContext } from './fetch-resource.js';
import { storedFileOf } from '../storage/stored-file.js';
import type { CrawlSink } from './crawl-sink.js';
import type { Frontier, Task, TaskRecord } from './frontier.js';
import {
  obtainBody,
  type BodyCache,
  type BodyKind,
  type BodyResult,
  type Format,
  type PrototypeContext,
  type SizeCaps,
} from './obtain-body.js';
import { OpenTasks } from './open-tasks.js';
import { badId, readRootLists } from './root-lists.js';
import { parseJson, parsePrototype, readIdList, requireObject } from '../api/parse.js';

export type {
  BodyCache,
  BodyKind,
  CacheCandidate,
  CachedBody,
  Format,
  PrototypeContext,
  SizeCaps,
} from './obtain-body.js';
export { DEFAULT_SIZE_CAPS, JOURNAL_ORIGIN } from './obtain-body.js';
export type { CrawlSink, PrototypeDetails } from './crawl-sink.js';

export interface CrawlOptions {
  fetch: FetchContext;
  frontier: Frontier;
  /** Where what the crawl finds goes: bodies stored, failures, milestones. */
  sink: CrawlSink;
  keys: readonly string[];
  caps: SizeCaps;
  formats: ReadonlySet<Format>;
  /** Only these prototype ids, when given (`--prototype`). */
  only?: ReadonlySet<string>;
  cache?: BodyCache;
  /**
   * What each prototype cost last time (export --since), in resources: prototypes are done in the
   * order of what is left of them, and this tells before their lists are read.
   */
  expected?: ReadonlyMap<string, number>;
  /**
   * How long the very first request may take, retries included. A wrong --base-url often points
   * at a host that accepts connections and never answers: with the patient per-request timeout
   * and retries the user would wait minutes for a hint. Once the service has answered, the usual
   * timeouts apply.
   */
  firstContactMs: number;
}

type HandOff = Parameters<Task>[0];

/**
 * Walks everything the keys can read. Each resource is one task on the frontier; a handler parses
 * what it fetched and adds the resources it names, so the whole walk shares one limiter.
 */
export class AccountCrawler {
  constructor(private readonly options: CrawlOptions) {}

  /** Which key reads each prototype: the first whose list names it. */
  private readonly owner = new Map<string, string>();

  /** For work that follows the crawl on the same client, spool and counters (page assets). */
  get fetchContext(): FetchContext {
    return this.options.fetch;
  }

  /** Fetches the prototype lists (fatal on failure) and schedules everything below them. */
  async start(): Promise<void> {
    const owners = await readRootLists(this.options);
    for (const [id, key] of owners) this.owner.set(id, key);
    this.options.sink.listed([...this.owner.keys()]);
    for (const id of this.owner.keys()) this.schedule(new Step(this, undefined, 'prototype', { prototype: id }), true);
  }

  /** The prototypes the lists named (those `--prototype` picks), read or not. */
  get listedCount(): number {
    return this.owner.size;
  }

  private async prototype(id: string, key: string, handOff: HandOff): Promise<void> {
    const ids: PathIds = { prototype: id };
    const source = sourceOf('prototype', ids);
    const body = await this.fetchBody(undefined, source, 'json', key, handOff, (buffer) => {
      const value = parseJson(buffer, source);
      const info = parsePrototype(value, source);
      const { revision, milestone } = currentRevision(value);
      const context: PrototypeContext = { id, key, revision, lastModification: info.lastModification };
      this.options.sink.prototype(context, info.name, { lastUser: info.lastUser, milestone });
      return context;
    });
    if (!body) return;
    const proto = body.parsed;
    this.store(proto, 'prototype', ids, source, body.result);
    // With the metadata, the lists that tell how big the prototype is come first.
    this.children(proto, 'prototype', ids, true);
  }

  /**
   * Schedules what the table of kinds fetches with one resource of `kind`: its lists, and the
   * renderings `--formats` asks for. `cheap` marks a prototype's own lists (see schedule).
   */
  private children(proto: PrototypeContext, kind: KindName, ids: PathIds, cheap = false): void {
    for (const child of RESOURCE_KINDS[kind].children) {
      const { member, format } = RESOURCE_KINDS[child];
      if (member !== undefined) this.schedule(new Step(this, proto, child, ids, true), cheap);
      else if (format === undefined || this.options.formats.has(format))
        this.schedule(new Step(this, proto, child, ids));
    }
  }

  /** One resource a list named: its own body, then what comes with it. */
  private member(proto: PrototypeContext, kind: KindName, ids: PathIds): void {
    if (SHARED_KINDS.has(kind)) {
      // Named by several lists (a discussion by its prototype's and its page's): fetched once.
      const source = sourceOf(kind, ids);
      const named = this.named.get(proto.id) ?? new Set<string>();
      this.named.set(proto.id, named);
      if (named.has(source)) return;
      named.add(source);
    }
    this.schedule(new Step(this, proto, kind, ids));
    this.children(proto, kind, ids);
  }

  /** Per prototype: the sources of kinds named by several lists that are scheduled already. */
  private readonly named = new Map<string, Set<string>>();

  private async list(proto: PrototypeContext, kind: KindName, ids: PathIds, handOff: HandOff): Promise<void> {
    const { member, objectForm } = RESOURCE_KINDS[kind] as { member: KindName; objectForm?: boolean };
    const idKind = RESOURCE_KINDS[member].item as IdKind;
    const source = sourceOf(kind, ids);
    const body = await this.fetchBody(proto, source, 'json', proto.key, handOff, (buffer) =>
      readIdList(buffer, idKind, source, objectForm ?? false),
    );
    if (!body) return;
    // The list is archived as served even when some of its ids are rejected.
    this.store(proto, kind, ids, source, body.result);
    for (const id of body.parsed.rejected) this.recordError(source, badId(source, id));
    if (kind === 'page-list') this.options.sink.pagesListed(proto.id, body.parsed.ids.length);
    for (const id of body.parsed.ids) this.member(proto, member, { ...ids, [idKind]: id });
  }

  /**
   * One resource's body. A kind the service may not offer (an older page view) that answers 404
   * is noted as not offered, which leaves the archive complete, rather than recorded as an error.
   */
  private async resource(proto: PrototypeContext, kind: KindName, ids: PathIds, handOff: HandOff): Promise<void> {
    const { body: bodyKind, item, notOfferedOn404 } = RESOURCE_KINDS[kind];
    const source = sourceOf(kind, ids);
    const notOffered = (error: RabbitError): boolean => {
      if (!notOfferedOn404 || error.code !== 'HTTP_STATUS' || error.status !== 404) return false;
      this.options.sink.notOffered(source, 404);
      return true;
    };
    const check = (buffer: Buffer): undefined => {
      if (bodyKind === 'json') requireObject(parseJson(buffer, source), `${item ?? 'resource'} metadata`, source);
      return undefined;
    };
    const body = await this.fetchBody(proto, source, bodyKind, proto.key, handOff, check, notOffered);
    if (body) this.store(proto, kind, ids, source, body.result);
  }

  /**
   * Fetch (or reuse) one body and check it. Resource failures are recorded and yield null; fatal
   * ones (disk full, interruption) propagate and end the run. Once the body is in the spool the
   * task hands its slot on: checking and storing it need no connection.
   */
  private async fetchBody<T>(
    proto: PrototypeContext | undefined,
    source: string,
    kind: BodyKind,
    key: string,
    handOff: HandOff,
    check: (buffer: Buffer) => T,
    /** True when it has dealt with a failure that is no error (a view the service does not offer). */
    absent?: (error: RabbitError) => boolean,
  ): Promise<{ result: BodyResult; parsed: T } | null> {
    try {
      const { result, buffer } = await obtainBody(this.options, proto, source, kind, key);
      await handOff();
      const parsed = check(buffer ?? Buffer.alloc(0));
      return { result, parsed };
    } catch (error) {
      // A key refused mid-run ends the task unrecorded: its prototype is recorded as unfinished once.
      if (isRabbitError(error, 'KEY_REFUSED') && this.options.fetch.keys?.refusalOf(key)) throw new KeyStopped();
      if (isRabbitError(error) && error.errorClass !== 'fatal') {
        if (absent?.(error)) return null;
        this.recordError(source, error);
        return null;
      }
      throw error;
    }
  }

  /**
   * Files a body of a prototype's `kind` under the entry the table builds from its ids. The name's
   * kind and ids go with it (`parsed`), so no stage after this one parses the name again.
   */
  private store(proto: PrototypeContext, kind: KindName, ids: PathIds, source: string, result: BodyResult): void {
    const path = entryPathOf(kind, ids, proto.revision);
    const parsed = { ...ids, kind, revision: proto.revision };
    this.options.sink.stored(storedFileOf({ path, source, parsed }, result), proto, result.reused);
  }

  private recordError(source: string, error: RabbitError): void {
    this.options.sink.failed(source, error);
  }

  /**
   * Tasks still open per prototype. When the last one ends the prototype is done; a task the
   * frontier dropped when it was halted (--max-duration) never ends, so what is left open after
   * the drain is exactly the prototypes with work undone.
   */
  private readonly openTasks = new OpenTasks();

  /**
   * Prototypes with scheduled work that never finished, and how many tasks each (after a halt, or
   * a key refused mid-run), of the keys `read` picks.
   */
  unfinishedPrototypes(read: (key: string) => boolean = () => true): [id: string, tasks: number][] {
    return this.openTasks.entries().filter(([id]) => read(this.owner.get(id) as string));
  }

  /**
   * Adds a step of its prototype, in the prototype's group: the frontier starts the group with the
   * fewest requests left first. `cheap` marks the metadata and the lists that tell how big the
   * prototype is: they start before any group while its size is not known from an earlier run.
   */
  private schedule(step: Step, cheap = false): void {
    const prototypeId = step.prototypeId;
    this.openTasks.opened(prototypeId);
    const known = this.options.expected?.has(prototypeId) ?? false;
    this.options.frontier.add(step, cheap && !known ? undefined : prototypeId);
    this.rank(prototypeId);
  }

  /** Runs a step the frontier started (Step.run), then closes it: the last closed ends its prototype. */
  async run(step: Step, handOff: HandOff): Promise<void> {
    const { prototypeId, proto } = step;
    const key = this.owner.get(prototypeId) as string;
    // The tasks of a key refused mid-run stay open and make no request, as those a halt drops.
    if (this.options.fetch.keys?.refusalOf(key)) return;
    try {
      if (proto === undefined) await this.prototype(prototypeId, key, handOff);
      else if (step.list) await this.list(proto, step.kind, step.ids, handOff);
      else await this.resource(proto, step.kind, step.ids, handOff);
    } catch (error) {
      if (error instanceof KeyStopped) return;
      throw error;
    }
    if (!this.openTasks.closed(prototypeId)) return this.rank(prototypeId);
    this.options.frontier.forget(prototypeId);
    this.named.delete(prototypeId);
    this.options.sink.prototypeDone(prototypeId);
  }

  private rank(prototypeId: string): void {
    this.options.frontier.rank(prototypeId, this.openTasks.left(prototypeId, this.options.expected?.get(prototypeId)));
  }
}

/**
 * One scheduled request as data: a prototype's metadata (no context yet), one of its lists or one
 * resource. Every resource a list names waits on the frontier until its turn, so an account's
 * pages and elements can be waiting at once: a record of five fields each, where a closure and the
 * context it kept alive cost several times that, and were most of the heap the crawl held.
 */
class Step implements TaskRecord {
  constructor(
    private readonly crawler: AccountCrawler,
    readonly proto: PrototypeContext | undefined,
    readonly kind: KindName,
    readonly ids: PathIds,
    readonly list = false,
  ) {}

  get prototypeId(): string {
    return this.ids.prototype as string;
  }

  run(handOff: HandOff): Promise<void> {
    return this.crawler.run(this, handOff);
  }
}

/** A task ended by its key's refusal: not a failure of its resource, nor of the run. */
class KeyStopped extends Error {}

/** Kinds that more than one list names. */
const SHARED_KINDS = new Set(KIND_NAMES.filter((kind) => listsNaming(kind).length > 1));
