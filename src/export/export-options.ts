import type { ServiceOptions } from '../client/service-options.js';
import type { KeyRefusal } from '../client/key-refusal.js';
import type { Format } from '../crawl/crawl-account.js';
import type { ManifestError, NotOffered } from '../manifest/types.js';
import type { EventSink } from './events.js';
import type { DeadlineTimer } from './deadline.js';
import { EXPORT_DEFAULTS } from './export-defaults.js';

/**
 * An export's options as a program or the CLI gives them; resolveExportSettings (export-settings.ts)
 * checks them once, fills in the defaults and splits them into the sections the run's parts read.
 */
export interface ExportOptions extends ServiceOptions {
  out: string;
  formats?: ReadonlySet<Format>;
  prototypes?: ReadonlySet<string>;
  /** An earlier archive (export --since): unchanged prototypes are copied from it, not fetched. */
  since?: string;
  force?: boolean;
  onEvent?: EventSink;
  /** Stop fetching after this long and write what was stored, marked incomplete. */
  maxDurationMs?: number;
  /** The timer `maxDurationMs` runs on (tests expire it when they choose). */
  deadlineTimer?: DeadlineTimer;
  /** How long the first request may take before the run ends as NO_ANSWER (EXPORT_DEFAULTS.firstContactMs). */
  firstContactMs?: number;
}

export { EXPORT_DEFAULTS };

/** What an export did; manifest.json in the archive has the whole of it. */
export interface ExportResult {
  out: string;
  complete: boolean;
  archiveBytes: number;
  peakInFlight: number;
  /** True when --max-duration cut the run short (the manifest's errors name what was left undone). */
  deadlineReached: boolean;
  prototypes: { total: number; reused: number; fetched: number };
  stats: { requests: number; retries: number; bytes: number; files: number };
  /** The bodies counted in `stats.bytes` as they came over the wire, before Content-Encoding was undone. */
  wireBytes: number;
  errorCount: number;
  /**
   * Times the whole service was gone and the run paused for it, the time paused in all, and whether
   * the last outage outlasted the patience (the run stopped; the same command resumes it).
   */
  outages: { count: number; totalMs: number; gaveUp: boolean };
  /** The first errors, for a message; the manifest lists every one. */
  errors: ManifestError[];
  /**
   * How far the run got: of the prototypes the lists named, those complete; the requests never
   * started (a run that stopped early, a key refused) and the prototypes they belong to; the
   * requests in flight or page assets the stop left unfetched (errors with its code).
   */
  left: {
    prototypesListed: number;
    prototypesComplete: number;
    requestsNotStarted: number;
    prototypesLeft: number;
    requestsCutOff: number;
  };
  /** What the service does not offer (older page views answered 404): not errors. */
  notOffered?: NotOffered[];
  /**
   * Keys the service stopped honouring during the run (revoked): their prototypes stopped there and
   * are recorded unfinished (KEY_REFUSED); the same command with a working key resumes the run.
   */
  keysRefused?: KeyRefusal[];
}

/** Errors a result carries; the manifest has the rest. */
export const RESULT_ERROR_LIMIT = 20;

export type { Transport } from '../client/service-options.js';
