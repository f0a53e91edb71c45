import type { ManifestError } from '../manifest/types.js';
import type { PreviousCost } from '../manifest/previous-costs.js';
import type { OutageEvent } from '../client/outage-monitor.js';

export type { OutageEvent, PreviousCost };

/**
 * What an export reports while it runs. The core only emits these; src/cli decides how (or
 * whether) to show them, so a test can run an export and see that nothing was printed.
 */
export type ExportEvent =
  // `proxy`: host:port of the proxy every request goes through, if one does.
  | { type: 'start'; baseUrl: string; out: string; concurrency: number; resumed: number; proxy?: string }
  // `bytes` as stored (decoded); `wireBytes` as they came over the wire (compressed, when the answer was), else as `bytes`.
  | {
      type: 'response';
      source: string;
      status: number;
      bytes: number;
      queued: number;
      inFlight: number;
      wireBytes?: number;
    }
  | { type: 'retry'; source: string; attempt: number; delayMs: number; reason: string }
  | { type: 'prototype'; id: string; name: string | null; revision: number }
  | { type: 'error'; error: ManifestError }
  | { type: 'concurrency'; value: number }
  | { type: 'journal-set-aside'; reason: string }
  | { type: 'phase'; phase: 'crawl' | 'requisites' | 'archive' | 'done' }
  | { type: 'archive-progress'; bytes: number; entries: number; total: number }
  // So the progress line can estimate the whole run: the prototypes the crawl will walk, once the lists are read.
  | { type: 'prototypes-listed'; ids: string[] }
  // A prototype's list of pages was read: how many pages it has.
  | { type: 'pages-listed'; id: string; count: number }
  // A prototype's last task has finished: what it cost is now exact.
  | { type: 'prototype-done'; id: string }
  // A body obtained without a request: copied from --since's archive or a resumed run's journal.
  | { type: 'reused'; source: string; bytes: number }
  // What the previous archive (--since, backup) held per prototype, when it was opened.
  | { type: 'previous'; prototypes: PreviousCost[] }
  // The whole service went away (the run pauses), a probe found it still gone, it came back, or patience ran out.
  | ({ type: 'outage' } & OutageEvent);

export type EventSink = (event: ExportEvent) => void;

/** Live counters kept from the events, for spinners and summaries. */
export interface ProgressCounts {
  requests: number;
  retries: number;
  queued: number;
  inFlight: number;
  prototypes: number;
  bytes: number;
  errors: number;
}
