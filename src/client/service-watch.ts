import { randomInt } from 'node:crypto';
import { sourceOf } from '../api/entry-paths.js';
import type { RabbitError } from '../core/errors.js';
import { discardBody, statusError, toNetworkError, type HttpClient } from './http-client.js';
import { KeyWatch, REFUSAL_STATUS, type KeyCheck, type KeyRefusal } from './key-refusal.js';
import { OutageMonitor, type OutageEvent, type ProbeResult } from './outage-monitor.js';
import { answersAsService, OUTAGE_DEFAULTS, outageSignalOf, type OutagePolicy } from './outage-policy.js';
import { parseRetryAfter, RETRY_DEFAULTS, type RetryPolicy } from './retry-policy.js';
import { defaultSleep } from './retrying.js';
import { STALL_DEFAULTS, type StallPolicy } from './transfer-watchdog.js';

/**
 * The client's defaults and its watch over the service as a whole (the outage pause, the key
 * watch), with the probes they send. Every command that talks to the service builds them here,
 * so export, live-check and restore wait out an outage alike.
 */
export interface RequestSettings {
  retry?: Partial<RetryPolicy>;
  stall?: Partial<StallPolicy>;
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  outage?: Partial<OutagePolicy>;
  /** --outage-patience, over `outage.patienceMs`. */
  outagePatienceMs?: number;
}

export interface RequestDefaults {
  retry: RetryPolicy;
  stall: StallPolicy;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
  outage: OutagePolicy;
}

export function requestDefaults(settings: RequestSettings): RequestDefaults {
  return {
    retry: { ...RETRY_DEFAULTS, ...settings.retry },
    stall: { ...STALL_DEFAULTS, ...settings.stall },
    random: settings.random ?? (() => randomInt(0, 2 ** 32) / 2 ** 32),
    sleep: settings.sleep ?? defaultSleep,
    outage: {
      ...OUTAGE_DEFAULTS,
      ...settings.outage,
      ...(settings.outagePatienceMs !== undefined ? { patienceMs: settings.outagePatienceMs } : {}),
    },
  };
}

/** What the watches share: the run's clock, signal and hold on new work. */
export interface WatchParts {
  client: HttpClient;
  keys: readonly string[];
  policy: OutagePolicy;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
  signal: AbortSignal;
  /** Start no new work while the service is away or a key is checked, and start again after. */
  hold: () => void;
  release: () => void;
}

/** Pauses every request while the service is gone; probes with a key the service still honours. */
export function watchOutage(
  parts: WatchParts & {
    keyWatch?: KeyWatch;
    onEvent: (event: OutageEvent) => void;
    giveUp: (error: RabbitError) => void;
  },
): OutageMonitor {
  const { client, now } = parts;
  return new OutageMonitor({
    policy: parts.policy,
    now,
    sleep: parts.sleep,
    signal: parts.signal,
    probe: (signal) => probeService(client, probeKey(parts.keys, parts.keyWatch), signal, now),
    hold: parts.hold,
    release: parts.release,
    onEvent: parts.onEvent,
    giveUp: parts.giveUp,
  });
}

/** Tells a key revoked mid-run from one resource it may not read (key-refusal.ts). */
export function watchKeys(
  parts: WatchParts & { onRefused: (refusal: KeyRefusal, everyKey: boolean) => void },
): KeyWatch {
  return new KeyWatch({
    keys: parts.keys,
    policy: parts.policy,
    now: parts.now,
    sleep: parts.sleep,
    signal: parts.signal,
    check: (key, signal) => checkKey(parts.client, key, signal),
    hold: parts.hold,
    release: parts.release,
    onRefused: parts.onRefused,
  });
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
  const source = sourceOf('prototype-list', {});
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
function probeKey(all: readonly string[], keys: KeyWatch | undefined): string {
  return all.find((key) => keys?.refusalOf(key) === undefined) ?? all[0] ?? '';
}

/**
 * Whether the service still honours `key`: its list of prototypes, which it read at the start of
 * the run. A refusal of that list is a refusal of the key, not of one resource it may not read.
 */
export async function checkKey(client: HttpClient, key: string, signal: AbortSignal): Promise<KeyCheck> {
  const source = sourceOf('prototype-list', {});
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
