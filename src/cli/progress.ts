import ora, { type Ora } from 'ora';
import type { ExportEvent, ProgressCounts } from '../export/events.js';
import { mib, printable } from './format.js';

export type ProgressMode = 'spinner' | 'lines' | 'silent';

/**
 * A spinner only on a terminal that says how wide it is: ora divides by the width, and a pseudo
 * terminal reporting 0 columns (script, some CI runners) would make it loop forever.
 */
export function progressMode(stream: NodeJS.WriteStream, silent: boolean): ProgressMode {
  if (silent) return 'silent';
  return stream.isTTY && (stream.columns ?? 0) > 0 ? 'spinner' : 'lines';
}

export interface ProgressReporter {
  onEvent(event: ExportEvent): void;
  /** Live counts, shared with the summary. */
  counts: ProgressCounts;
  stop(): void;
}

/**
 * Shows an export as it runs: an ora spinner with live counts on a terminal, a plain line every
 * few seconds when stderr is a pipe or a log file, nothing with --quiet or --json.
 */
export function createProgress(mode: ProgressMode, stream: NodeJS.WriteStream, intervalMs = 10_000): ProgressReporter {
  const counts: ProgressCounts = { requests: 0, retries: 0, queued: 0, inFlight: 0, prototypes: 0, bytes: 0, errors: 0 };
  let phase = 'starting';
  let spinner: Ora | undefined;
  let timer: NodeJS.Timeout | undefined;
  const line = (text: string): void => {
    if (mode === 'silent') return;
    if (spinner) spinner.clear();
    stream.write(`${text}\n`);
    if (spinner) spinner.render();
  };
  const status = (): string =>
    `${phase}: ${counts.requests} requests done, ${counts.queued} queued, ${counts.inFlight} in flight, ` +
    `${counts.prototypes} prototypes, ${mib(counts.bytes)}, ${counts.errors} errors` +
    (counts.retries ? `, ${counts.retries} retries` : '');

  if (mode === 'spinner') {
    spinner = ora({ text: status(), stream, discardStdin: false }).start();
    timer = setInterval(() => {
      if (spinner) spinner.text = status();
    }, 200);
  } else if (mode === 'lines') {
    timer = setInterval(() => line(status()), intervalMs);
  }
  timer?.unref();

  return {
    counts,
    onEvent(event) {
      switch (event.type) {
        case 'start':
          line(`exporting ${event.baseUrl} to ${event.out} (${event.concurrency} at a time)`);
          if (event.resumed > 0) line(`resuming: ${event.resumed} bodies saved by an interrupted run will be checked and reused`);
          break;
        case 'journal-set-aside':
          line(`the saved progress of an earlier run was set aside (${event.reason}); starting afresh`);
          break;
        case 'response':
          counts.requests++;
          counts.bytes += event.bytes;
          counts.queued = event.queued;
          counts.inFlight = event.inFlight;
          break;
        case 'retry':
          counts.retries++;
          break;
        case 'prototype':
          counts.prototypes++;
          if (mode === 'lines') line(`prototype ${event.id} r${event.revision}: ${printable(event.name ?? '(no name)')}`);
          break;
        case 'error':
          counts.errors++;
          line(`error: ${event.error.source}: ${printable(event.error.message)}`);
          break;
        case 'concurrency':
          if (mode === 'lines') line(`concurrency now ${event.value}`);
          break;
        case 'phase':
          phase = event.phase === 'archive' ? 'writing archive' : event.phase;
          if (mode === 'lines' && event.phase === 'archive') line(status());
          break;
        case 'archive-progress':
          break;
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      spinner?.stop();
    },
  };
}
