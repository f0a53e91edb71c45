import { RabbitError, isRabbitError } from '../core/errors.js';
import type { BodyKind, Format } from '../api/resource-kinds.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from '../storage/body-cache.js';
import { cachedBodyOf } from '../storage/stored-file.js';
import { fetchResource, type FetchContext, type FetchRequest, type FetchResult } from './fetch-resource.js';
import { redactedCopy } from './redacted-body.js';
import type { SizeCaps } from '../client/size-caps.js';

// Where a body comes from: a copy an earlier run left (this output's journal, or the archive given
// to --since) when it may stand in for a request, else the service, asked conditionally when an
// older copy can be revalidated.

export type { BodyCache, CacheCandidate, CachedBody, PrototypeContext };
/** How a body is checked, and what `--formats` can ask for: the table of kinds says. */
export type { BodyKind, Format };

/** Origin label of copies from the output's own journal (a resumed run): they count as downloaded. */
export const JOURNAL_ORIGIN = 'journal';

// The caps are the client's (every command that reads the service takes --max-size).
export { DEFAULT_SIZE_CAPS, type SizeCaps } from '../client/size-caps.js';

export interface BodySources {
  fetch: FetchContext;
  cache?: BodyCache;
  caps: SizeCaps;
}

/**
 * The body of one resource: a fresh copy from the cache, else a request (conditional when an
 * older copy exists: a 304 means the copy is still right), else a plain request. A damaged copy
 * is never used: the resource is fetched instead.
 */
export async function obtainBody(
  options: BodySources,
  proto: PrototypeContext | undefined,
  source: string,
  kind: BodyKind,
  key: string,
): Promise<{ result: BodyResult; buffer: Buffer | undefined }> {
  const found = proto && options.cache ? await options.cache.lookup(source, proto) : undefined;
  // A copy over tonight's cap (an earlier run's was larger) stands in for nothing, unread: the
  // request is made as without it, and the fetch refuses a body that size as it always does.
  const candidate = found && found.size <= options.caps[kind] ? found : undefined;
  if (candidate?.fresh) {
    const hit = await fromCache(options, candidate, kind, source);
    if (hit) return hit;
  }
  const request: FetchRequest = { source, key, maxBytes: options.caps[kind], keep: kind === 'json' };
  const conditional = candidate && !candidate.fresh && candidate.lastModified ? candidate : undefined;
  if (conditional) {
    const answer = await fetchResource(options.fetch, {
      ...request,
      ifModifiedSince: conditional.lastModified as string,
    });
    if (answer.status === 200) return { result: bodyResultOf(answer), buffer: answer.body.buffer };
    const hit = await fromCache(options, conditional, kind, source);
    if (hit) return hit;
  }
  const answer = await fetchResource(options.fetch, request);
  if (answer.status !== 200) throw new RabbitError('HTTP_STATUS', `GET ${source} answered 304 unasked`, { source });
  return { result: bodyResultOf(answer), buffer: answer.body.buffer };
}

/**
 * The copy, loaded into the spool and checked, with the run's keys replaced as in a download (a copy
 * made before keys were replaced may hold one); undefined when it turns out damaged.
 */
async function fromCache(
  options: BodySources,
  copy: CacheCandidate,
  kind: BodyKind,
  source: string,
): Promise<{ result: BodyResult; buffer: Buffer | undefined } | undefined> {
  const { secrets, spool } = options.fetch;
  const loaded = await copy.load().catch(() => undefined);
  const body =
    loaded && secrets
      ? await redactedCopy(spool, loaded, secrets, source).catch((error: unknown) => {
          if (isRabbitError(error) && error.errorClass === 'fatal') throw error;
          return undefined;
        })
      : loaded;
  if (!body) return undefined;
  return {
    result: { ...body, reused: copy.origin ?? JOURNAL_ORIGIN },
    buffer: kind === 'json' ? await options.fetch.spool.read(body) : undefined,
  };
}

/**
 * `reused` names the copy's origin when nothing was downloaded for it; `data` is the body when it
 * is still in memory (just downloaded and small), so the archive need not read it back.
 */
export type BodyResult = CachedBody & { reused: string | undefined; data?: Buffer };

export function bodyResultOf(fetched: Extract<FetchResult, { status: 200 }>): BodyResult {
  const result: BodyResult = Object.assign(cachedBodyOf(fetched.body, fetched), { reused: undefined });
  if (fetched.body.buffer) result.data = fetched.body.buffer;
  return result;
}
