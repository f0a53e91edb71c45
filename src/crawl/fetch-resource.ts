import { RabbitError, isRabbitError } from '../core/errors.js';
import type { GetOptions, HttpResponse } from '../client/http-client.js';
import { discardBody, toNetworkError } from '../client/http-client.js';
import { serviceRequest, type RequestContext } from '../client/service-request.js';
import type { Spool, SpooledBody } from '../storage/spool.js';
import type { TransferWatch } from '../client/transfer-watchdog.js';
import { DecodedBody, parseContentEncoding, wireCap, type Coding } from '../client/content-coding.js';
import type { ResponseBody } from '../client/response-body.js';
import type { SecretMarker } from '../core/secret-marker.js';
import { RedactedBody } from './redacted-body.js';

/** The client's context (service-request.ts), and where the crawl stores and records what it fetched. */
export interface FetchContext extends RequestContext {
  spool: Spool;
  onAttempt?: (event: AttemptEvent) => void;
  /** The run's API keys, replaced in every body before it is spooled: no key is ever stored. */
  secrets?: SecretMarker;
}

export type AttemptEvent =
  /** `bytes` as stored (decoded), `wireBytes` as they came over the wire (before Content-Encoding was undone). */
  | { type: 'response'; source: string; status: number; bytes: number; wireBytes?: number; attempt: number }
  | { type: 'retry'; source: string; attempt: number; delayMs: number; reason: string; status?: number };

export interface FetchRequest {
  source: string;
  key: string;
  maxBytes: number;
  /** Keep the body in memory too (JSON that will be parsed). */
  keep: boolean;
  ifModifiedSince?: string;
  anonymous?: boolean;
}

export type FetchResult =
  | {
      status: 200;
      body: SpooledBody;
      contentType: string;
      lastModified: string | null;
      /** When the body was in the spool (ISO 8601), by the run's clock. */
      fetchedAt: string;
      attempts: number;
      /** How many keys were replaced in the body (see `secrets`), when any were. */
      keyRedactions?: number;
    }
  | { status: 304; attempts: number };

/**
 * One resource, fetched until it is safely in the spool or has failed for good. The request, its
 * retries and the outage pause are the client's (service-request.ts); what is the crawl's is
 * here: how a body is stored (its size cap, decoded, keys replaced, spooled) and each answer
 * recorded. The limiter slot is held while a retry waits, which is what the adaptive concurrency
 * accounts for.
 */
export function fetchResource(ctx: FetchContext, request: FetchRequest): Promise<FetchResult> {
  const get: GetOptions = { key: request.key, signal: ctx.signal };
  if (request.ifModifiedSince) get.ifModifiedSince = request.ifModifiedSince;
  if (request.anonymous) get.anonymous = true;
  return serviceRequest<FetchResult>(ctx, {
    method: 'GET',
    source: request.source,
    ...(request.anonymous ? {} : { key: request.key }),
    send: () => ctx.client.get(request.source, get),
    accept: async (response, watch, attempt) => {
      if (response.status === 200) return store(ctx, request, response, watch, attempt);
      if (response.status !== 304) return undefined;
      await discardBody(response.body, watch.seen);
      ctx.onAttempt?.({ type: 'response', source: request.source, status: 304, bytes: 0, attempt });
      return { status: 304, attempts: attempt };
    },
    onRefused: (status, attempt) =>
      ctx.onAttempt?.({ type: 'response', source: request.source, status, bytes: 0, attempt }),
    onRetry: (event) =>
      ctx.onAttempt?.({
        type: 'retry',
        source: event.source,
        attempt: event.attempt,
        delayMs: event.delayMs,
        reason: event.reason,
        ...(event.status !== undefined ? { status: event.status } : {}),
      }),
  });
}

/** A 200's body into the spool: its length checked, decoded, keys replaced, hashed. */
async function store(
  ctx: FetchContext,
  request: FetchRequest,
  response: HttpResponse,
  watch: TransferWatch,
  attempt: number,
): Promise<FetchResult> {
  const body = response.body;
  const lengthHeader = response.headers['content-length'];
  const expectedLength = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const codings = codingsOf(body, response.headers['content-encoding'], request.source);
  // Content-Length of an encoded answer is its length on the wire (content-coding.ts).
  const lengthCap = codings.length > 0 ? wireCap(request.maxBytes) : request.maxBytes;
  if (expectedLength !== undefined && expectedLength > lengthCap) {
    body.destroy();
    throw tooLarge(request, expectedLength);
  }
  const decoded = codings.length > 0 ? decodedBody(body, codings, request, watch.seen, expectedLength) : undefined;
  // Keys replaced as the body is decoded and before it is hashed; the length is checked on the bytes served.
  const redacted = ctx.secrets
    ? new RedactedBody(decoded ?? body, ctx.secrets, {
        source: request.source,
        ...(decoded ? {} : { onChunk: watch.seen }),
        ...(expectedLength !== undefined && !decoded ? { expectedLength } : {}),
      })
    : undefined;
  const spooled = await ctx.spool
    .write(redacted ?? decoded ?? body, {
      maxBytes: request.maxBytes,
      keep: request.keep,
      source: request.source,
      ...(decoded || redacted ? {} : { onChunk: watch.seen }),
      ...(expectedLength !== undefined && !decoded && !redacted ? { expectedLength } : {}),
    })
    .catch((error: unknown) => {
      body.destroy();
      throw bodyError(error, request.source, ctx.signal);
    });
  if (spooled.size === 0 && !request.anonymous) throw emptyBody(request.source);
  const wireBytes = decoded ? decoded.wireBytes : (redacted?.bytesIn ?? spooled.size);
  ctx.onAttempt?.({ type: 'response', source: request.source, status: 200, bytes: spooled.size, wireBytes, attempt });
  // Kept as sent, but for the keys: a service may echo the request's in any header.
  const served = (name: string): string | undefined => {
    const value = response.headers[name];
    return value === undefined || !ctx.secrets ? value : ctx.secrets.redactText(value);
  };
  return {
    status: 200,
    body: spooled,
    contentType: served('content-type') ?? 'application/octet-stream',
    lastModified: served('last-modified') ?? null,
    fetchedAt: new Date(ctx.now()).toISOString(),
    attempts: attempt,
    ...(redacted?.redactions ? { keyRedactions: redacted.redactions } : {}),
  };
}

function tooLarge(request: FetchRequest, length: number): RabbitError {
  return new RabbitError(
    'BODY_TOO_LARGE',
    `GET ${request.source}: body of ${length} bytes exceeds the cap of ${request.maxBytes}`,
    { source: request.source, method: 'GET' },
  );
}

/**
 * A 200 without a byte, where every API resource has one (JSON, a PNG, a page view): a proxy or a
 * server that gave up mid-answer, worth another attempt and never stored as the resource. Static
 * assets (anonymous requests) may be empty files and are kept as they are.
 */
function emptyBody(source: string): RabbitError {
  return new RabbitError('BODY_EMPTY', `GET ${source} answered 200 with an empty body`, { source, method: 'GET' });
}

/** The answer's Content-Encoding; a body in a coding we cannot undo is dropped at once. */
function codingsOf(body: ResponseBody, header: string | undefined, source: string): Coding[] {
  try {
    return parseContentEncoding(header, source);
  } catch (error) {
    body.destroy(error);
    throw error;
  }
}

/** The body as the service meant it, for an answer with a Content-Encoding; the watchdog sees the wire. */
function decodedBody(
  body: ResponseBody,
  codings: Coding[],
  request: FetchRequest,
  onWire: (bytes: number) => void,
  expectedWireLength: number | undefined,
): DecodedBody {
  return new DecodedBody(body, {
    codings,
    maxBytes: request.maxBytes,
    source: request.source,
    onWire,
    abort: (error) => body.destroy(error),
    ...(expectedWireLength !== undefined ? { expectedWireLength } : {}),
  });
}

/** A failure while reading the body after good headers: the body was cut short, retry it. */
function bodyError(error: unknown, source: string, signal: AbortSignal): unknown {
  if (isRabbitError(error)) return error;
  if ((error as { code?: string } | null)?.code === 'ENOSPC') return error;
  const network = toNetworkError(error, source, signal);
  if (network.code === 'NETWORK') {
    return new RabbitError('BODY_TRUNCATED', `GET ${source}: body cut short (${network.message})`, {
      source,
      method: 'GET',
      cause: error,
    });
  }
  return network;
}
