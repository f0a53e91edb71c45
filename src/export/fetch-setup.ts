import type { FetchContext } from '../crawl/fetch-resource.js';
import type { Frontier } from '../crawl/frontier.js';
import type { Spool } from '../storage/spool.js';
import type { RabbitError } from '../core/errors.js';
import type { RequestLimiter, ServiceSession } from '../client/service-session.js';
import { redactSecrets } from '../core/redact.js';
import type { SecretMarker } from '../core/secret-marker.js';
import type { CrawlSink } from '../crawl/crawl-sink.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import type { EventSink } from './events.js';

/**
 * How every request of the export is made: the service session's context (client/service-session.ts)
 * with the spool bodies go to, the keys replaced in them, and each attempt counted and reported
 * as an event.
 */

/** What a run counts of its attempts: each retry, and each answer read with its stored and wire bytes. */
export interface AttemptCounts {
  retried(): void;
  answered(bytes: number, wireBytes: number): void;
}

export function fetchContext(parts: {
  session: ServiceSession;
  spool: Spool;
  frontier: Frontier;
  counts: AttemptCounts;
  emit: EventSink;
  /** The run's keys, replaced in every body stored. */
  secrets?: SecretMarker | undefined;
}): FetchContext {
  const { frontier, counts, emit } = parts;
  return {
    ...parts.session.context,
    ...(parts.secrets ? { secrets: parts.secrets } : {}),
    spool: parts.spool,
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

/**
 * The frontier as the session's limiter: held while the service is away or a key is checked, and
 * resized as the service throttles, each new width told as an event.
 */
export function frontierLimiter(frontier: Frontier, emit: EventSink): RequestLimiter {
  return {
    hold: () => frontier.hold(),
    release: () => frontier.release(),
    resize: (value) => {
      frontier.concurrency = value;
      emit({ type: 'concurrency', value });
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
