import { setTimeout as sleep } from 'node:timers/promises';
import { RabbitError, isRabbitError } from '../core/errors.js';
import type { GetOptions, HttpClient } from '../client/http-client.js';
import { discardBody, statusError, toNetworkError } from '../client/http-client.js';
import type { AdaptiveConcurrency } from '../client/adaptive-concurrency.js';
import type { RateLimiter } from '../client/rate-limiter.js';
import { isThrottleStatus, mayRetry, parseRetryAfter, retryDelay, type RetryPolicy } from '../client/retry-policy.js';
import type { Spool, SpooledBody } from '../storage/spool.js';
import { stopReason } from '../client/stop-reason.js';
import { watchTransfer, type StallPolicy } from '../client/transfer-watchdog.js';
import type { OutageMonitor } from '../client/outage-monitor.js';
import { keyRefusedError, REFUSAL_STATUS, type KeyWatch } from '../client/key-refusal.js';
import { answersAsService, outageSignalOf } from '../client/outage-policy.js';
import { DecodedBody, parseContentEncoding, wireCap, type Coding } from '../client/content-coding.js';
import type { ResponseBody } from '../client/response-body.js';
import type { SecretMarker } from '../core/secret-marker.js';
import { RedactedBody } from './redacted-body.js';

export interface FetchContext {
  client: HttpClient;
  spool: Spool;
  retry: RetryPolicy;
  signal: AbortSignal;
  random: () => number;
  now: () => number;
  adaptive?: AdaptiveConcurrency;
  rateLimiter?: RateLimiter;
  onAttempt?: (event: AttemptEvent) => void;
  /** Minimum transfer rate, against bodies that trickle for ever; STALL_DEFAULTS when absent, so every caller is covered. */
  stall?: StallPolicy;
  /** How a retry waits out its backoff (a test passes a fake); rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** Pauses the whole run while the service is gone; without it every failure is the resource's own. */
  outage?: OutageMonitor;
  /** Tells a key revoked mid-run from one resource it may not read; without it a 401 is the resource's own. */
  keys?: KeyWatch;
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
      attempts: number;
      /** How many keys were replaced in the body (see `secrets`), when any were. */
      keyRedactions?: number;
    }
  | { status: 304; attempts: number };

/**
 * One resource, fetched until it is safely in the spool or has failed for good. Retries what
 * may succeed next time (429, 5xx, resets, timeouts, bodies cut short or empty), waiting per the retry
 * policy; everything else throws at once. The limiter slot is held while waiting, which is what
 * the adaptive concurrency accounts for.
 */
export async function fetchResource(ctx: FetchContext, request: FetchRequest): Promise<FetchResult> {
  /** Attempts and waiting held against this resource by its retry policy; an outage's are not. */
  let charged = 0;
  let waited = 0;
  let spentBefore: { charged: number; waited: number } | undefined;
  let unconfirmedRefunds = 0;
  /**
   * After an outage the failures that led into it are not held against the resource. An outage no
   * probe confirmed (the first probe found the service back) may have been two bad resources
   * failing together rather than the service: then only once, so they cannot pause the run for ever.
   */
  const refund = (confirmed: boolean): void => {
    if (spentBefore && (confirmed || unconfirmedRefunds++ === 0)) ({ charged, waited } = spentBefore);
    spentBefore = undefined;
  };
  const get: GetOptions = { key: request.key, signal: ctx.signal };
  if (request.ifModifiedSince) get.ifModifiedSince = request.ifModifiedSince;
  if (request.anonymous) get.anonymous = true;
  for (let attempt = 1; ; attempt++) {
    let failure: RabbitError;
    try {
      if (ctx.rateLimiter) await ctx.rateLimiter.take(ctx.signal);
      const keyed = request.anonymous ? undefined : ctx.keys;
      const refused = keyed?.refusalOf(request.key);
      if (refused) throw keyRefusedError(refused, request.source, `GET ${request.source} was not sent`);
      const sent = keyed?.sending() ?? 0;
      const response = await ctx.client.get(request.source, get);
      if (answersAsService(response.status)) ctx.outage?.answered();
      if (response.status === 200 || response.status === 304) keyed?.answered(request.key);
      const body = response.body;
      const watch = watchTransfer((error) => body.destroy(error), ctx.stall, request.source);
      try {
        if (response.status === 200) {
          const lengthHeader = response.headers['content-length'];
          const expectedLength = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
          const codings = codingsOf(body, response.headers['content-encoding'], request.source);
          // Content-Length of an encoded answer is its length on the wire (content-coding.ts).
          const lengthCap = codings.length > 0 ? wireCap(request.maxBytes) : request.maxBytes;
          if (expectedLength !== undefined && expectedLength > lengthCap) {
            body.destroy();
            throw tooLarge(request, expectedLength);
          }
          const decoded =
            codings.length > 0 ? decodedBody(body, codings, request, watch.seen, expectedLength) : undefined;
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
          ctx.adaptive?.succeeded();
          const wireBytes = decoded ? decoded.wireBytes : (redacted?.bytesIn ?? spooled.size);
          ctx.onAttempt?.({
            type: 'response',
            source: request.source,
            status: 200,
            bytes: spooled.size,
            wireBytes,
            attempt,
          });
          return {
            status: 200,
            body: spooled,
            contentType: response.headers['content-type'] ?? 'application/octet-stream',
            lastModified: response.headers['last-modified'] ?? null,
            attempts: attempt,
            ...(redacted?.redactions ? { keyRedactions: redacted.redactions } : {}),
          };
        }
        await discardBody(body, watch.seen);
      } finally {
        watch.stop();
      }
      ctx.onAttempt?.({ type: 'response', source: request.source, status: response.status, bytes: 0, attempt });
      if (response.status === 304) {
        ctx.adaptive?.succeeded();
        return { status: 304, attempts: attempt };
      }
      if (isThrottleStatus(response.status)) ctx.adaptive?.throttled();
      // Nothing more goes out with a key the service refuses: this request ends, and so do the others.
      const refusal =
        keyed && REFUSAL_STATUS.has(response.status)
          ? await keyed.judge(request.key, sent, response.status, request.source)
          : undefined;
      if (refusal) throw keyRefusedError(refusal, request.source, `GET ${request.source}`);
      failure = statusError(
        'GET',
        request.source,
        response.status,
        parseRetryAfter(response.headers['retry-after'], ctx.now()),
      );
    } catch (error) {
      failure = isRabbitError(error) ? error : toNetworkError(error, request.source, ctx.signal);
    }
    if (ctx.signal.aborted) throw stopReason(ctx.signal, request.source);
    if (failure.errorClass !== 'retryable') throw failure.after(attempt);
    // What the resource has spent before a run of failures an outage may explain: refunded if one does.
    const signal = ctx.outage ? outageSignalOf(failure) : null;
    if (signal === null) spentBefore = undefined;
    else spentBefore ??= { charged, waited };
    if (signal !== null && ctx.outage?.failed(request.source, signal, failure.retryAfterMs) === 'outage') {
      refund(await waitForService(ctx, request.source));
      continue;
    }
    charged++;
    const delay = retryDelay(charged, ctx.retry, ctx.random, failure.retryAfterMs);
    if (!mayRetry(charged, waited, delay, ctx.retry)) throw failure.after(attempt);
    waited += delay;
    const pause = ctx.sleep ?? ((ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }));
    let outageBegan = false;
    try {
      if (ctx.outage) outageBegan = await ctx.outage.backoff(delay, ctx.signal);
      else await pause(delay, ctx.signal);
    } catch {
      throw stopReason(ctx.signal, request.source);
    }
    if (outageBegan) {
      // The service went away while this one waited its turn: its failures were the outage's.
      refund(await waitForService(ctx, request.source));
      continue;
    }
    // Reported once the retry goes out, so a wait an outage cut short is not counted as one.
    ctx.onAttempt?.({
      type: 'retry',
      source: request.source,
      attempt,
      delayMs: delay,
      reason: failure.code === 'HTTP_STATUS' ? String(failure.status) : failure.code,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
    });
  }
}

/**
 * Waits out an outage; true when a probe confirmed it. The run's end (--max-duration, patience
 * spent, Ctrl-C) ends the wait.
 */
async function waitForService(ctx: FetchContext, source: string): Promise<boolean> {
  try {
    return (await ctx.outage?.waitForService(ctx.signal)) ?? false;
  } catch {
    throw stopReason(ctx.signal, source);
  }
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
