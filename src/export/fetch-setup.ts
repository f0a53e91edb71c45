import { randomInt } from 'node:crypto';
import { AdaptiveConcurrency } from '../client/adaptive-concurrency.js';
import type { FetchContext } from '../crawl/fetch-resource.js';
import type { HttpClient } from '../client/http-client.js';
import { RateLimiter } from '../client/rate-limiter.js';
import { RETRY_DEFAULTS } from '../client/retry-policy.js';
import { STALL_DEFAULTS } from '../client/transfer-watchdog.js';
import type { Frontier } from '../crawl/frontier.js';
import type { Spool } from '../storage/spool.js';
import type { RunStats } from '../manifest/types.js';
import type { RabbitError } from '../core/errors.js';
import { setTimeout as delay } from 'node:timers/promises';
import { API_PREFIX } from '../api/paths.js';
import { discardBody, statusError, toNetworkError } from '../client/http-client.js';
import { OutageMonitor, type ProbeResult } from '../client/outage-monitor.js';
import { keyRefusedError, KeyWatch, REFUSAL_STATUS, type KeyCheck } from '../client/key-refusal.js';
import { answersAsService, OUTAGE_DEFAULTS, outageSignalOf, type OutagePolicy } from '../client/outage-policy.js';
import { parseRetryAfter } from '../client/retry-policy.js';
import { redactSecrets } from '../core/redact.js';
import type { SecretMarker } from '../core/secret-marker.js';
import type { CrawlHooks } from '../crawl/crawl-account.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import type { EventSink } from './events.js';
import type { ExportOptions } from './export-options.js';

/**
 * How every request of the export is made: the retry, stall and rate policies from the options,
 * concurrency that adapts to throttling by resizing the frontier, and each attempt counted and
 * reported as an event.
 */
export function fetchContext(parts: {
  options: Pick<
    ExportOptions,
    'keys' | 'sleep' | 'outage' | 'outagePatienceMs' | 'retry' | 'stall' | 'random' | 'maxRps'
  >;
  client: HttpClient;
  spool: Spool;
  frontier: Frontier;
  signal: AbortSignal;
  stats: RunStats;
  /** Bytes of the answers' bodies as they came over the wire (before Content-Encoding was undone). */
  wire?: { bytes: number };
  emit: EventSink;
  now: () => number;
  /** An outage past its patience, or every key refused: stop the run as --max-duration does. */
  giveUp: (error: RabbitError) => void;
  /** The run's keys, replaced in every body stored. */
  secrets?: SecretMarker | undefined;
}): FetchContext {
  const { options, frontier, stats, emit, now } = parts;
  const sleep = options.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const policy: OutagePolicy = {
    ...OUTAGE_DEFAULTS,
    ...options.outage,
    ...(options.outagePatienceMs !== undefined ? { patienceMs: options.outagePatienceMs } : {}),
  };
  // One refused key among several stops its own prototypes (the crawl skips them); the last one, the run.
  const keys = new KeyWatch({
    keys: options.keys,
    policy,
    now,
    sleep,
    signal: parts.signal,
    check: (key, signal) => checkKey(parts.client, key, signal),
    hold: () => frontier.hold(),
    release: () => frontier.release(),
    onRefused: (refusal, everyKey) => {
      if (everyKey) parts.giveUp(keyRefusedError(refusal));
    },
  });
  const outage = new OutageMonitor({
    policy,
    now,
    sleep,
    signal: parts.signal,
    // With a key the service still honours: a refused one is sent nothing more.
    probe: (signal) => probeService(parts.client, probeKey(options.keys, keys), signal, now),
    hold: () => frontier.hold(),
    release: () => frontier.release(),
    onEvent: (event) => emit({ type: 'outage', ...event }),
    giveUp: parts.giveUp,
  });
  return {
    ...(parts.secrets ? { secrets: parts.secrets } : {}),
    outage,
    keys,
    sleep,
    client: parts.client,
    spool: parts.spool,
    retry: { ...RETRY_DEFAULTS, ...options.retry },
    signal: parts.signal,
    stall: { ...STALL_DEFAULTS, ...options.stall },
    random: options.random ?? (() => randomInt(0, 2 ** 32) / 2 ** 32),
    now,
    adaptive: new AdaptiveConcurrency(
      frontier.concurrency,
      (value) => {
        frontier.concurrency = value;
        emit({ type: 'concurrency', value });
      },
      now,
    ),
    ...(options.maxRps ? { rateLimiter: new RateLimiter(options.maxRps, now) } : {}),
    onAttempt: (event) => {
      if (event.type === 'retry') {
        stats.retries++;
        return emit({
          type: 'retry',
          source: event.source,
          attempt: event.attempt,
          delayMs: event.delayMs,
          reason: event.reason,
        });
      }
      stats.requests++;
      stats.bytes += event.bytes;
      const wireBytes = event.wireBytes ?? event.bytes;
      if (parts.wire) parts.wire.bytes += wireBytes;
      emit({
        type: 'response',
        source: event.source,
        status: event.status,
        bytes: event.bytes,
        wireBytes,
        queued: frontier.queued,
        inFlight: frontier.running,
      });
    },
  };
}

/**
 * One probe of a paused run: the list of prototypes, the request every run begins with, so one
 * that has answered before. Its body is dropped; only whether the service answers matters.
 */
export async function probeService(
  client: HttpClient,
  key: string,
  signal: AbortSignal,
  now: () => number,
): Promise<ProbeResult> {
  const source = `${API_PREFIX}prototypes.json`;
  try {
    const response = await client.get(source, { key, signal });
    await discardBody(response.body);
    if (answersAsService(response.status)) return { back: true };
    const failure = statusError(
      'GET',
      source,
      response.status,
      parseRetryAfter(response.headers['retry-after'], now()),
    );
    return {
      back: false,
      signal: outageSignalOf(failure) ?? 'gateway',
      answer: `HTTP ${response.status}`,
      ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
    };
  } catch (error) {
    const failure = toNetworkError(error, source, signal);
    return { back: false, signal: outageSignalOf(failure) ?? 'transport', answer: networkAnswer(failure) };
  }
}

/** The key an outage's probe goes with: the first one not refused (any answer will do). */
function probeKey(all: readonly string[], keys: KeyWatch): string {
  return all.find((key) => keys.refusalOf(key) === undefined) ?? all[0] ?? '';
}

/**
 * Whether the service still honours `key`: its list of prototypes, which it read at the start of
 * the run. A refusal of that list is a refusal of the key, not of one resource it may not read.
 */
export async function checkKey(client: HttpClient, key: string, signal: AbortSignal): Promise<KeyCheck> {
  const source = `${API_PREFIX}prototypes.json`;
  try {
    const response = await client.get(source, { key, signal });
    await discardBody(response.body);
    if (REFUSAL_STATUS.has(response.status)) return { verdict: 'refused' };
    if (response.status < 300) return { verdict: 'works' };
    return { verdict: 'unsure', answer: `HTTP ${response.status}` };
  } catch (error) {
    return { verdict: 'unsure', answer: networkAnswer(toNetworkError(error, source, signal)) };
  }
}

/** A failure as the progress display names it: the socket's code (ECONNREFUSED) or the error's. */
function networkAnswer(failure: RabbitError): string {
  const cause = (failure.cause as { code?: unknown } | undefined)?.code;
  return typeof cause === 'string' ? cause : failure.code;
}

/** The error event of a resource that failed for good: the record the manifest gets, keys redacted. */
export function errorEvents(emit: EventSink, keys: readonly string[]): (source: string, error: RabbitError) => void {
  return (source, error) => {
    const recorded = manifestErrorOf(source, error);
    emit({ type: 'error', error: { ...recorded, message: redactSecrets(recorded.message, keys) } });
  };
}

/** The crawl's milestones as events, for the progress display; `done` hears of each prototype done too. */
export function progressHooks(
  emit: EventSink,
  done: (id: string) => void,
): Pick<CrawlHooks, 'prototype' | 'listed' | 'pagesListed' | 'prototypeDone'> {
  return {
    prototype: (proto, name) => emit({ type: 'prototype', id: proto.id, name, revision: proto.revision }),
    listed: (ids) => emit({ type: 'prototypes-listed', ids }),
    pagesListed: (id, count) => emit({ type: 'pages-listed', id, count }),
    prototypeDone: (id) => {
      emit({ type: 'prototype-done', id });
      done(id);
    },
  };
}
