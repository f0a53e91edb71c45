import { RabbitError, isRabbitError } from '../core/errors.js';
import { entryPathOf, sourceOf, type PathIds } from '../api/entry-paths.js';
import type { IdKind } from '../api/ids.js';
import { KIND_NAMES, listsNaming, RESOURCE_KINDS, type KindName } from '../api/resource-kinds.js';
import { currentRevision } from '../api/revision.js';
import { fetchResource, type FetchContext } from './fetch-resource.js';
import { networkReason } from '../client/network-failure.js';
import { storedFileOf } from '../storage/stored-file.js';
import type { CrawlSink } from './crawl-sink.js';
import type { Frontier, Task } from './frontier.js';
import {
  bodyResultOf,
  obtainBody,
  type BodyCache,
  type BodyKind,
  type BodyResult,
  type Format,
  type PrototypeContext,
  type SizeCaps,
} from './obtain-body.js';
import { OpenTasks } from './open-tasks.js';
import { parseJson, parsePrototype, readIdList, requireObject, type IdList } from '../api/parse.js';

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
/** The sink's earlier name, which export/fetch-setup.ts types its progress milestones by. */

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

/** The account's list of prototypes, which every key's list is asked as. */
const ROOT_LIST = sourceOf('prototype-list', {});

/** Where a prototype asked for by id is served; the list's source for an id that makes no path. */
function askedSource(id: string): string {
  try {
    return sourceOf('prototype', { prototype: id });
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    return ROOT_LIST;
  }
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
    const owner = this.owner;
    const refused: RabbitError[] = [];
    for (const [index, key] of this.options.keys.entries()) {
      let list: IdList;
      try {
        list = index === 0 ? await this.firstContact(key) : await this.fetchRootList(key, index);
      } catch (error) {
        // One revoked key among several must not cost the prototypes the others can read: that
        // run is incomplete (exit 3), naming the key by its position. Only when every key is
        // refused is there nothing to export.
        if (!isRabbitError(error, 'KEY_REFUSED') || this.options.keys.length === 1) throw error;
        refused.push(error);
        this.recordError(ROOT_LIST, error);
        continue;
      }
      for (const id of list.ids) {
        if (!owner.has(id) && (!this.options.only || this.options.only.has(id))) owner.set(id, key);
      }
    }
    if (refused.length === this.options.keys.length) throw refused[0];
    if (this.options.only) {
      for (const id of this.options.only) {
        if (!owner.has(id)) {
          this.recordError(
            askedSource(id),
            new RabbitError('HTTP_STATUS', `prototype ${id} is not in the list any key can read`, {
              source: askedSource(id),
            }),
          );
        }
      }
    }
    this.options.sink.listed([...owner.keys()]);
    for (const [id, key] of owner) this.schedule(id, (handOff) => this.prototype(id, key, handOff), true);
  }

  /** The prototypes the lists named (those `--prototype` picks), read or not. */
  get listedCount(): number {
    return this.owner.size;
  }

  /** The first key's list, within firstContactMs: a silent host ends the run as NO_ANSWER, not after minutes. */
  private async firstContact(key: string): Promise<IdList> {
    const limitMs = this.options.firstContactMs;
    const limit = new AbortController();
    // A service that asked to wait (429 or 503 with Retry-After) has answered: the pause that
    // follows is the outage's, bounded by --outage-patience, not by this limit.
    const timer = setTimeout(() => {
      if ((this.options.fetch.outage?.summary().count ?? 0) === 0) limit.abort(new Error('first contact'));
    }, limitMs);
    const fetch = { ...this.options.fetch, signal: AbortSignal.any([this.options.fetch.signal, limit.signal]) };
    try {
      return await this.fetchRootList(key, 0, fetch);
    } catch (error) {
      if (!limit.signal.aborted || this.options.fetch.signal.aborted) throw error;
      const url = this.urlOf(ROOT_LIST);
      throw new RabbitError(
        'NO_ANSWER',
        `no answer from the service within ${Math.round(limitMs / 1000)} s (GET ${url})`,
        {
          source: ROOT_LIST,
          data: { url, waitedMs: limitMs },
        },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The address a request for `source` went to, without the key (for messages). */
  private urlOf(source: string): string {
    const { client } = this.options.fetch;
    return `${client.origin}${client.basePath}${source}`;
  }

  private async fetchRootList(key: string, index: number, fetch = this.options.fetch): Promise<IdList> {
    const source = ROOT_LIST;
    try {
      const result = await fetchResource(fetch, {
        source,
        key,
        maxBytes: this.options.caps.json,
        keep: true,
      });
      if (result.status !== 200)
        throw new RabbitError('HTTP_STATUS', `GET ${source} answered 304 without a request for it`, { source });
      const path = index === 0 ? entryPathOf('prototype-list', {}) : entryPathOf('key-list', { key: index + 1 });
      this.store(undefined, { path, source, result: bodyResultOf(result) });
      const list = readIdList(result.body.buffer as Buffer, 'prototype', source);
      for (const id of list.rejected) this.recordError(source, badId(source, id));
      return list;
    } catch (error) {
      throw rootFailure(error, source, this.options.keys.length > 1 ? index + 1 : undefined, this.urlOf(source));
    }
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
    this.store(proto, { path: entryPathOf('prototype', ids, proto.revision), source, result: body.result });
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
      if (member !== undefined) this.schedule(proto.id, (handOff) => this.list(proto, child, ids, handOff), cheap);
      else if (format === undefined || this.options.formats.has(format))
        this.schedule(proto.id, (handOff) => this.resource(proto, child, ids, handOff));
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
    this.schedule(proto.id, (handOff) => this.resource(proto, kind, ids, handOff));
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
    this.store(proto, { path: entryPathOf(kind, ids, proto.revision), source, result: body.result });
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
    if (body) this.store(proto, { path: entryPathOf(kind, ids, proto.revision), source, result: body.result });
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

  private store(
    proto: PrototypeContext | undefined,
    entry: { path: string; source: string; result: BodyResult },
  ): void {
    const file = storedFileOf(entry, entry.result);
    this.options.sink.stored(file, proto, entry.result.reused);
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
   * Adds a task of the prototype, in the prototype's group: the frontier starts the group with the
   * fewest requests left first. `cheap` marks the metadata and the lists that tell how big the
   * prototype is: they start before any group while its size is not known from an earlier run.
   */
  private schedule(prototypeId: string, task: (handOff: HandOff) => Promise<void>, cheap = false): void {
    this.openTasks.opened(prototypeId);
    const key = this.owner.get(prototypeId) as string;
    const { frontier } = this.options;
    const known = this.options.expected?.has(prototypeId) ?? false;
    frontier.add(
      async (handOff) => {
        // The tasks of a key refused mid-run stay open and make no request, as those a halt drops.
        if (this.options.fetch.keys?.refusalOf(key)) return;
        try {
          await task(handOff);
        } catch (error) {
          if (error instanceof KeyStopped) return;
          throw error;
        }
        if (!this.openTasks.closed(prototypeId)) return this.rank(prototypeId);
        frontier.forget(prototypeId);
        this.named.delete(prototypeId);
        this.options.sink.prototypeDone(prototypeId);
      },
      cheap && !known ? undefined : prototypeId,
    );
    this.rank(prototypeId);
  }

  private rank(prototypeId: string): void {
    this.options.frontier.rank(prototypeId, this.openTasks.left(prototypeId, this.options.expected?.get(prototypeId)));
  }
}

/** A task ended by its key's refusal: not a failure of its resource, nor of the run. */
class KeyStopped extends Error {}

/** Kinds that more than one list names. */
const SHARED_KINDS = new Set(KIND_NAMES.filter((kind) => listsNaming(kind).length > 1));

function badId(source: string, id: string): RabbitError {
  return new RabbitError('BAD_ID', `${source} lists an id of the wrong shape: ${id}; it was not requested`, {
    source,
    id,
  });
}

/** The root list decides the run: without it nothing can be exported. */
function rootFailure(error: unknown, source: string, keyNumber: number | undefined, url: string): unknown {
  if (!isRabbitError(error)) return error;
  const which = keyNumber === undefined ? 'the API key' : `API key number ${keyNumber}`;
  const data = { url, ...(keyNumber !== undefined ? { keyNumber } : {}) };
  if (error.status === 401 || error.status === 403) {
    return new RabbitError('KEY_REFUSED', `the service refused ${which} (HTTP ${error.status} on ${url})`, {
      source,
      status: error.status,
      cause: error,
      data,
    });
  }
  if (error.status === 404) {
    return new RabbitError('API_NOT_FOUND', `there is no Rabbit API at ${url} (HTTP 404)`, {
      source,
      status: 404,
      cause: error,
      data,
    });
  }
  if (error.code === 'NETWORK' || error.code === 'TIMEOUT') {
    const reason = networkReason(error);
    return new RabbitError(reason.code, `${reason.words} (GET ${url})`, { source, cause: error, data });
  }
  if (error.errorClass === 'fatal') return error;
  return new RabbitError(error.code, `cannot read the list of prototypes: ${error.message}`, {
    source,
    ...(error.status !== undefined ? { status: error.status } : {}),
    errorClass: 'fatal',
    cause: error,
    data,
  });
}
