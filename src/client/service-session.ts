import { setMaxListeners } from 'node:events';
import { RabbitError } from '../core/errors.js';
import { AdaptiveConcurrency } from './adaptive-concurrency.js';
import { HttpClient } from './http-client.js';
import { keyRefusedError, type KeyWatch } from './key-refusal.js';
import type { OutageEvent, OutageMonitor } from './outage-monitor.js';
import { RateLimiter } from './rate-limiter.js';
import type { RequestContext } from './service-request.js';
import type { ServiceOptions, Transport } from './service-options.js';
import { requestDefaults, watchKeys, watchOutage, type WatchParts } from './service-watch.js';
import { watchdogClockOf, type StallPolicy } from './transfer-watchdog.js';

/**
 * One command's connection to the service: the HTTP client (its pool, or the proxy tunnel), the
 * rate limit, the key watch, the outage pause and the adaptive concurrency, built alike for
 * export, live check and restore, and released together by `close`. Requests go through
 * `context` (service-request.ts); what a command does with them is its own.
 */

/** A command's service options, its own defaults filled in: what its session is opened with. */
export type SessionSettings = Pick<
  ServiceOptions,
  | 'baseUrl'
  | 'keys'
  | 'dispatcher'
  | 'retry'
  | 'maxRps'
  | 'stall'
  | 'outage'
  | 'outagePatienceMs'
  | 'sleep'
  | 'random'
  | 'timer'
> & { concurrency: number; timeoutMs: number; transport?: Transport };

/**
 * The command's one limiter of requests, which the session steers: held while the service is
 * away or a key is checked, and narrowed or widened as the service throttles or keeps up.
 */
export interface RequestLimiter {
  hold(): void;
  release(): void;
  resize(concurrency: number): void;
}

/** What the session hears from the command, and tells it. */
export interface SessionRun {
  /** The command's stop: every request, backoff and probe listens on it. */
  signal: AbortSignal;
  now: () => number;
  limiter: RequestLimiter;
  onOutage?: (event: OutageEvent) => void;
  /** An outage past its patience, or every key that read anything refused: the command stops with this. */
  giveUp: (error: RabbitError) => void;
}

/** The client's context with every part a session builds present. */
export type SessionContext = RequestContext & {
  outage: OutageMonitor;
  keys: KeyWatch;
  adaptive: AdaptiveConcurrency;
  stall: StallPolicy;
  sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
};

export interface ServiceSession {
  readonly client: HttpClient;
  readonly context: SessionContext;
  /** Ends the watches' waits and probes and closes the connections (a dispatcher passed in stays its owner's). */
  close(): Promise<void>;
}

export function openServiceSession(settings: SessionSettings, run: SessionRun): ServiceSession {
  const defaults = requestDefaults(settings);
  const client = new HttpClient({
    baseUrl: settings.baseUrl,
    connections: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    ...settings.transport,
    ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
  });
  // Closing aborts this too: an outage's probes and a key's checks sleep on it, and stop.
  const closed = new AbortController();
  const signal = AbortSignal.any([run.signal, closed.signal]);
  setMaxListeners(0, signal);
  const { limiter, now } = run;
  const watch: WatchParts = {
    client,
    keys: settings.keys,
    policy: defaults.outage,
    now,
    sleep: defaults.sleep,
    signal,
    hold: () => limiter.hold(),
    release: () => limiter.release(),
  };
  // One refused key among several stops what it reads (the command skips it); the last one, the command.
  const keys = watchKeys({
    ...watch,
    onRefused: (refusal, everyKey) => {
      if (everyKey) run.giveUp(keyRefusedError(refusal));
    },
  });
  const outage = watchOutage({
    ...watch,
    keyWatch: keys,
    onEvent: run.onOutage ?? (() => undefined),
    giveUp: run.giveUp,
  });
  const context: SessionContext = {
    client,
    signal,
    now,
    retry: defaults.retry,
    random: defaults.random,
    sleep: defaults.sleep,
    stall: defaults.stall,
    // The run's timer, when it has one, for the watchdog and the first contact: a test's clock moves them on.
    ...(settings.timer ? { timer: settings.timer, watchdog: watchdogClockOf(now, settings.timer) } : {}),
    outage,
    keys,
    adaptive: new AdaptiveConcurrency(settings.concurrency, (value) => limiter.resize(value), now),
    // Paced on the session's clock, as its retries and outages wait: a test's clock skips the waits.
    ...(settings.maxRps
      ? { rateLimiter: new RateLimiter(settings.maxRps, now, (ms, given) => defaults.sleep(ms, given ?? signal)) }
      : {}),
  };
  return {
    client,
    context,
    close: async () => {
      closed.abort(new RabbitError('INTERRUPTED', 'the connection to the service was closed'));
      await client.close();
    },
  };
}

/** A command's options with its defaults (concurrency, timeout) filled in. */
export function sessionSettingsOf(
  options: ServiceOptions,
  defaults: { readonly concurrency: number; readonly timeoutMs: number },
): SessionSettings {
  const { baseUrl, keys, dispatcher, retry, maxRps, stall, outage, outagePatienceMs, sleep, random, timer } = options;
  return {
    ...defined({ dispatcher, retry, maxRps, stall, outage, outagePatienceMs, sleep, random, timer }),
    baseUrl,
    keys,
    concurrency: options.concurrency ?? defaults.concurrency,
    timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
    transport: {
      ...(options.proxy ? { proxy: options.proxy } : {}),
      allowInsecureHttp: options.allowInsecureHttp ?? false,
    },
  };
}

/** The fields given a value: an option left out stays absent, not present as undefined. */
function defined<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
