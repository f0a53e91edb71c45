import type { ManifestError } from '../manifest/types.js';

/**
 * What an export reports while it runs. The core only emits these; src/cli decides how (or
 * whether) to show them, so a test can run an export and see that nothing was printed.
 */
export type ExportEvent =
  | { type: 'start'; baseUrl: string; out: string; concurrency: number; resumed: number }
  | { type: 'response'; source: string; status: number; bytes: number; queued: number; inFlight: number }
  | { type: 'retry'; source: string; attempt: number; delayMs: number; reason: string }
  | { type: 'prototype'; id: string; name: string | null; revision: number }
  | { type: 'error'; error: ManifestError }
  | { type: 'concurrency'; value: number }
  | { type: 'journal-set-aside'; reason: string }
  | { type: 'phase'; phase: 'crawl' | 'archive' | 'done' }
  | { type: 'archive-progress'; bytes: number; entries: number; total: number };

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
