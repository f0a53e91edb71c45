import { AdaptiveConcurrency } from '../client/adaptive-concurrency.js';
import type { FetchContext } from '../crawl/fetch-resource.js';
import type { HttpClient } from '../client/http-client.js';
import { RateLimiter } from '../client/rate-limiter.js';
import type { Frontier } from '../crawl/frontier.js';
import type { Spool } from '../storage/spool.js';
import type { RabbitError } from '../core/errors.js';
import { keyRefusedError } from '../client/key-refusal.js';
import { requestDefaults, watchKeys, watchOutage, type WatchParts } from '../client/service-watch.js';
import { redactSecrets } from '../core/redact.js';
import type { SecretMarker } from '../core/secret-marker.js';
import type { CrawlSink } from '../crawl/crawl-sink.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import type { EventSink } from './events.js';
import type { ExportOptions } from './export-options.js';

/**
 * How every request of the export is made: the client's defaults and watches (client/service-watch.ts)
 * from the options, concurrency that adapts to throttling by resizing the frontier, and each
 * attempt counted and reported as an event.
 */
/** What a run counts of its attempts: each retry, and each answer read with its stored and wire bytes. */
export interface AttemptCounts {
  retried(): void;
  answered(bytes: number, wireBytes: number): void;
}

export function fetchContext(parts: {
  options: Pick<
    ExportOptions,
    'keys' | 'sleep' | 'outage' | 'outagePatienceMs' | 'retry' | 'stall' | 'random' | 'maxRps'
  >;
  client: HttpClient;
  spool: Spool;
  frontier: Frontier;
  signal: AbortSignal;
  counts: AttemptCounts;
  emit: EventSink;
  now: () => number;
  /** An outage past its patience, or every key refused: stop the run as --max-duration does. */
  giveUp: (error: RabbitError) => void;
  /** The run's keys, replaced in every body stored. */
  secrets?: SecretMarker | undefined;
}): FetchContext {
  const { options, frontier, counts, emit, now } = parts;
  const defaults = requestDefaults(options);
  const watch: WatchParts = {
    client: parts.client,
    keys: options.keys,
    policy: defaults.outage,
    now,
    sleep: defaults.sleep,
    signal: parts.signal,
    hold: () => frontier.hold(),
    release: () => frontier.release(),
  };
  // One refused key among several stops its own prototypes (the crawl skips them); the last one, the run.
  const keys = watchKeys({
    ...watch,
    onRefused: (refusal, everyKey) => {
      if (everyKey) parts.giveUp(keyRefusedError(refusal));
    },
  });
  const outage = watchOutage({
    ...watch,
    keyWatch: keys,
    onEvent: (event) => emit({ type: 'outage', ...event }),
    giveUp: parts.giveUp,
  });
  return {
    ...(parts.secrets ? { secrets: parts.secrets } : {}),
    outage,
    keys,
    sleep: defaults.sleep,
    client: parts.client,
    spool: parts.spool,
    retry: defaults.retry,
    signal: parts.signal,
    stall: defaults.stall,
    random: defaults.random,
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
        counts.retried();
        return emit({
          type: 'retry',
          source: event.source,
          attempt: event.attempt,
          delayMs: event.delayMs,
          reason: event.reason,
        });
      }
      const wireBytes = event.wireBytes ?? event.bytes;
      counts.answered(event.bytes, wireBytes);
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

// The probes moved to the client with the watches that send them; these names are kept for the export's callers.
export { checkKey, probeService } from '../client/service-watch.js';

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
): Pick<CrawlSink, 'prototype' | 'listed' | 'pagesListed' | 'prototypeDone'> {
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
