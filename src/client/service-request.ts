import { isRabbitError } from '../core/errors.js';
import type { AdaptiveConcurrency } from './adaptive-concurrency.js';
import { discardBody, statusError, toNetworkError, type HttpClient, type HttpResponse } from './http-client.js';
import { keyRefusedError, REFUSAL_STATUS, type KeyWatch } from './key-refusal.js';
import { answersAsService } from './outage-policy.js';
import type { RateLimiter } from './rate-limiter.js';
import { isRetryableStatus, isThrottleStatus, parseRetryAfter } from './retry-policy.js';
import { retrying, type Outcome, type RetryContext, type RetryEvent } from './retrying.js';
import type { RunTimer } from '../core/run-timer.js';
import { watchTransfer, type StallPolicy, type TransferWatch, type WatchdogClock } from './transfer-watchdog.js';

/**
 * One client for every request to the service, export's, live-check's and restore's alike. Its
 * layers, outermost first:
 *
 * 1. retrying.ts: the retry policy's backoff, Retry-After as its floor, the outage pause;
 * 2. the rate limit (--max-rps), then the key watch: nothing goes out with a key the service refused;
 * 3. HttpClient: redirects within the origin, the key kept out of everything else;
 * 4. the answer: an answer of the service ends an outage; the stall watchdog over the body as it
 *    is read (decoded by the caller, content-coding.ts), a throttle lowers the concurrency, a
 *    success raises it, a 401/403 is judged by the key watch, a status retries may cure becomes
 *    a failure carrying its Retry-After.
 */
export interface RequestContext extends RetryContext {
  client: HttpClient;
  adaptive?: AdaptiveConcurrency;
  rateLimiter?: RateLimiter;
  /** Minimum transfer rate, against bodies that trickle for ever; STALL_DEFAULTS when absent, so every caller is covered. */
  stall?: StallPolicy;
  /** The stall watchdog's clock, the run's own when it has one; the system's when absent. */
  watchdog?: WatchdogClock;
  /** The run's timer (ServiceOptions.timer), for limits a caller sets on its requests; the system's when absent. */
  timer?: RunTimer;
  /** Tells a key revoked mid-run from one resource it may not read; without it a 401 is the resource's own. */
  keys?: KeyWatch;
}

export interface ServiceCall<T> {
  method: 'GET' | 'PUT' | 'DELETE';
  source: string;
  /** The key the request carries, for the key watch; none for a request it should not judge (static assets). */
  key?: string;
  /** Sends the request once: the answer at its headers, its body still to be read. */
  send(): Promise<HttpResponse>;
  /**
   * The result of an answer the caller wants, its body read under `watch` (each chunk off the wire
   * reported to `watch.seen`); undefined for an answer to judge as a failure (its body is dropped here).
   */
  accept(response: HttpResponse, watch: TransferWatch, attempt: number): Promise<T | undefined>;
  /** The result of a status no retry cures, where the caller wants it as a result rather than an error. */
  settle?(status: number): T;
  /** An answer not accepted, once its body was dropped. */
  onRefused?(status: number, attempt: number): void;
  onRetry?(event: RetryEvent): void;
  /** A backoff begins (retrying.ts). */
  onWait?(event: RetryEvent): void;
}

/**
 * Sends a GET, PUT or DELETE until it is done or has failed for good. Only requests that may be
 * repeated come here: a POST does not (restore's create looks before sending one again).
 */
export function serviceRequest<T>(ctx: RequestContext, call: ServiceCall<T>): Promise<T> {
  return retrying(ctx, {
    method: call.method,
    source: call.source,
    attempt: (attempt) => once(ctx, call, attempt),
    ...(call.onRetry ? { onRetry: call.onRetry } : {}),
    ...(call.onWait ? { onWait: call.onWait } : {}),
  });
}

async function once<T>(ctx: RequestContext, call: ServiceCall<T>, attempt: number): Promise<Outcome<T>> {
  const { method, source } = call;
  try {
    await ctx.rateLimiter?.take(ctx.signal);
    const key = call.key;
    const keyed = key !== undefined ? ctx.keys : undefined;
    const refused = key !== undefined ? keyed?.refusalOf(key) : undefined;
    if (refused) throw keyRefusedError(refused, source, `${method} ${source} was not sent`);
    const sent = keyed?.sending() ?? 0;
    const response = await call.send();
    const { status } = response;
    if (answersAsService(status)) ctx.outage?.answered();
    if (key !== undefined && (status === 200 || status === 304)) keyed?.answered(key);
    const body = response.body;
    const watch = watchTransfer((error) => body.destroy(error), ctx.stall, source, ctx.watchdog, method);
    let result: T | undefined;
    try {
      result = await call.accept(response, watch, attempt);
      if (result === undefined) await discardBody(body, watch.seen);
    } finally {
      watch.stop();
    }
    if (result !== undefined) {
      ctx.adaptive?.succeeded();
      return { done: result };
    }
    call.onRefused?.(status, attempt);
    if (isThrottleStatus(status)) ctx.adaptive?.throttled();
    // Nothing more goes out with a key the service refuses: this request ends, and so do the others.
    const refusal =
      key !== undefined && keyed && REFUSAL_STATUS.has(status)
        ? await keyed.judge(key, sent, status, source)
        : undefined;
    if (refusal) throw keyRefusedError(refusal, source, `${method} ${source}`);
    if (call.settle && !isRetryableStatus(status)) return { done: call.settle(status) };
    return { failed: statusError(method, source, status, parseRetryAfter(response.headers['retry-after'], ctx.now())) };
  } catch (error) {
    return { failed: isRabbitError(error) ? error : toNetworkError(error, source, ctx.signal, method) };
  }
}
