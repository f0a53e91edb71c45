import { setTimeout as delay } from 'node:timers/promises';
import type { RabbitError } from '../core/errors.js';
import type { OutageMonitor } from './outage-monitor.js';
import { outageSignalOf } from './outage-policy.js';
import { mayRetry, retryDelay, type RetryPolicy } from './retry-policy.js';
import { stopReason } from './stop-reason.js';

/**
 * The one retry loop of every service request: the retry policy's backoff with Retry-After as
 * its floor, and the outage pause. Who sends what, and what counts as done, is the caller's
 * (service-request.ts for an ordinary request; restore's create, which must look before it sends
 * again); when to send again, and how long to wait first, is decided here only.
 */
export interface RetryContext {
  retry: RetryPolicy;
  signal: AbortSignal;
  random: () => number;
  now: () => number;
  /** How a backoff is waited (a test passes a fake); rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** Pauses every request while the service is gone; without it every failure is the request's own. */
  outage?: OutageMonitor;
}

/** What one attempt came to: the caller's result, or a failure to judge. */
export type Outcome<T> = { done: T } | { failed: RabbitError };

export interface RetryEvent {
  method: string;
  source: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  delayMs: number;
  /** The status, or the error's code. */
  reason: string;
  status?: number;
}

export interface Attempts<T> {
  method: string;
  source: string;
  /** Attempt number `attempt` (1-based). What it throws ends the loop as it is. */
  attempt(attempt: number): Promise<Outcome<T>>;
  /** Whether a failure may be tried again; by default, when its class is `retryable`. */
  retryable?(failure: RabbitError): boolean;
  /** A retry goes out now, after its backoff. */
  onRetry?(event: RetryEvent): void;
  /**
   * A backoff begins: told before it is waited, so that a display can say why nothing moves for
   * as long as a Retry-After of a minute (onRetry comes only once it is over).
   */
  onWait?(event: RetryEvent): void;
}

export function defaultSleep(ms: number, signal: AbortSignal): Promise<unknown> {
  return delay(ms, undefined, { signal });
}

/**
 * Runs attempts until one is done or a failure may not be tried again. The attempts and waiting
 * an outage explains are not held against the request: after an outage the failures that led
 * into it are refunded. An outage no probe confirmed (the first probe found the service back) may
 * have been two bad resources failing together rather than the service: then only once, so they
 * cannot pause the run for ever.
 */
export async function retrying<T>(ctx: RetryContext, call: Attempts<T>): Promise<T> {
  const { source } = call;
  let charged = 0;
  let waited = 0;
  let spentBefore: { charged: number; waited: number } | undefined;
  let unconfirmedRefunds = 0;
  const refund = (confirmed: boolean): void => {
    if (spentBefore && (confirmed || unconfirmedRefunds++ === 0)) ({ charged, waited } = spentBefore);
    spentBefore = undefined;
  };
  const waitForService = async (): Promise<boolean> => {
    try {
      return (await ctx.outage?.waitForService(ctx.signal)) ?? false;
    } catch {
      // The run's end (--max-duration, patience spent, Ctrl-C) ends the wait.
      throw stopReason(ctx.signal, source, call.method);
    }
  };
  for (let attempt = 1; ; attempt++) {
    const outcome = await call.attempt(attempt);
    if ('done' in outcome) return outcome.done;
    const failure = outcome.failed;
    if (ctx.signal.aborted) throw stopReason(ctx.signal, source, call.method);
    if (!(call.retryable?.(failure) ?? failure.errorClass === 'retryable')) throw failure.after(attempt);
    // What the request has spent before a run of failures an outage may explain: refunded if one does.
    const signal = ctx.outage ? outageSignalOf(failure) : null;
    if (signal === null) spentBefore = undefined;
    else spentBefore ??= { charged, waited };
    if (signal !== null && ctx.outage?.failed(source, signal, failure.retryAfterMs) === 'outage') {
      refund(await waitForService());
      continue;
    }
    charged++;
    const wait = retryDelay(charged, ctx.retry, ctx.random, failure.retryAfterMs);
    if (!mayRetry(charged, waited, wait, ctx.retry)) throw failure.after(attempt);
    waited += wait;
    const event: RetryEvent = {
      method: call.method,
      source,
      attempt,
      delayMs: wait,
      reason: failure.code === 'HTTP_STATUS' ? String(failure.status) : failure.code,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
    };
    call.onWait?.(event);
    let outageBegan = false;
    try {
      if (ctx.outage) outageBegan = await ctx.outage.backoff(wait, ctx.signal);
      else await (ctx.sleep ?? defaultSleep)(wait, ctx.signal);
    } catch {
      throw stopReason(ctx.signal, source, call.method);
    }
    if (outageBegan) {
      // The service went away while this one waited its turn: its failures were the outage's.
      refund(await waitForService());
      continue;
    }
    // Reported once the retry goes out, so a wait an outage cut short is not counted as one.
    call.onRetry?.(event);
  }
}
