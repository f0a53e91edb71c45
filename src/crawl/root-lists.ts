import { RabbitError, isRabbitError } from '../core/errors.js';
import { refuseUnheld } from '../api/held-prototypes.js';
import { entryPathOf, sourceOf } from '../api/entry-paths.js';
import { readIdList, type IdList } from '../api/parse.js';
import { networkReason } from '../client/network-failure.js';
import { SYSTEM_TIMER } from '../core/run-timer.js';
import { storedFileOf } from '../storage/stored-file.js';
import { fetchResource, type FetchContext } from './fetch-resource.js';
import { bodyResultOf, type SizeCaps } from './obtain-body.js';
import type { CrawlSink } from './crawl-sink.js';

/** What reading the keys' lists of prototypes needs of the crawl's options. */
export interface RootListOptions {
  fetch: FetchContext;
  sink: CrawlSink;
  keys: readonly string[];
  caps: SizeCaps;
  only?: ReadonlySet<string>;
  firstContactMs: number;
}

/** The account's list of prototypes, which every key's list is asked as. */
const ROOT_LIST = sourceOf('prototype-list', {});

/**
 * Reads every key's list of prototypes, stores each, and returns which key reads each prototype:
 * the first whose list names it (of those `--prototype` picks). The first key's list is the run's
 * first contact with the service and must answer within `firstContactMs`. A key refused while
 * another reads is recorded, so that run is incomplete (exit 3); every key refused, or any other
 * failure of a list, ends the run, since without the lists nothing can be exported.
 */
export async function readRootLists(options: RootListOptions): Promise<Map<string, string>> {
  const owner = new Map<string, string>();
  const listed = new Set<string>();
  const refused: RabbitError[] = [];
  for (const [index, key] of options.keys.entries()) {
    let list: IdList;
    try {
      list = index === 0 ? await firstContact(options, key) : await fetchRootList(options, key, index);
    } catch (error) {
      if (!isRabbitError(error, 'KEY_REFUSED') || options.keys.length === 1) throw error;
      refused.push(error);
      options.sink.failed(ROOT_LIST, error);
      continue;
    }
    for (const id of list.ids) {
      listed.add(id);
      if (!owner.has(id) && (!options.only || options.only.has(id))) owner.set(id, key);
    }
  }
  if (refused.length === options.keys.length) throw refused[0];
  // Every list read: an id none names is a mistake in the command, refused before any prototype is
  // fetched (an incomplete archive and a rerun of the same id would not help). With a key refused,
  // that key's list might have named it: recorded below, and the run is incomplete.
  if (refused.length === 0) refuseUnheld(options.only ?? [], [...listed], { name: 'the account' });
  for (const id of options.only ?? []) {
    if (owner.has(id)) continue;
    const source = askedSource(id);
    options.sink.failed(
      source,
      new RabbitError('HTTP_STATUS', `prototype ${id} is not in the list any key can read`, { source }),
    );
  }
  return owner;
}

/** An id a list named that is not of its kind's shape: recorded, never requested. */
export function badId(source: string, id: string): RabbitError {
  return new RabbitError('BAD_ID', `${source} lists an id of the wrong shape: ${id}; it was not requested`, {
    source,
    id,
  });
}

/** The first key's list, within firstContactMs: a silent host ends the run as NO_ANSWER, not after minutes. */
async function firstContact(options: RootListOptions, key: string): Promise<IdList> {
  const limitMs = options.firstContactMs;
  const limit = new AbortController();
  // A service that asked to wait (429 or 503 with Retry-After) has answered: the pause that
  // follows is the outage's, bounded by --outage-patience, not by this limit. On the run's timer,
  // which measures the same time its backoffs wait.
  const cancel = (options.fetch.timer ?? SYSTEM_TIMER)(limitMs, () => {
    if ((options.fetch.outage?.summary().count ?? 0) === 0) limit.abort(new Error('first contact'));
  });
  const fetch = { ...options.fetch, signal: AbortSignal.any([options.fetch.signal, limit.signal]) };
  try {
    return await fetchRootList({ ...options, fetch }, key, 0);
  } catch (error) {
    if (!limit.signal.aborted || options.fetch.signal.aborted) throw error;
    const url = urlOf(options.fetch, ROOT_LIST);
    throw new RabbitError(
      'NO_ANSWER',
      `no answer from the service within ${Math.round(limitMs / 1000)} s (GET ${url})`,
      {
        source: ROOT_LIST,
        data: { url, waitedMs: limitMs },
      },
    );
  } finally {
    cancel();
  }
}

async function fetchRootList(options: RootListOptions, key: string, index: number): Promise<IdList> {
  const source = ROOT_LIST;
  try {
    const result = await fetchResource(options.fetch, { source, key, maxBytes: options.caps.json, keep: true });
    if (result.status !== 200)
      throw new RabbitError('HTTP_STATUS', `GET ${source} answered 304 without a request for it`, { source });
    const path = index === 0 ? entryPathOf('prototype-list', {}) : entryPathOf('key-list', { key: index + 1 });
    const body = bodyResultOf(result);
    options.sink.stored(storedFileOf({ path, source }, body), undefined, body.reused);
    const list = readIdList(result.body.buffer as Buffer, 'prototype', source);
    for (const id of list.rejected) options.sink.failed(source, badId(source, id));
    return list;
  } catch (error) {
    const keyNumber = options.keys.length > 1 ? index + 1 : undefined;
    throw rootFailure(error, source, keyNumber, urlOf(options.fetch, source));
  }
}

/** The address a request for `source` went to, without the key (for messages). */
function urlOf(fetch: FetchContext, source: string): string {
  return `${fetch.client.origin}${fetch.client.basePath}${source}`;
}

/** Where a prototype asked for by id is served; the list's source for an id that makes no path. */
function askedSource(id: string): string {
  try {
    return sourceOf('prototype', { prototype: id });
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    return ROOT_LIST;
  }
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
