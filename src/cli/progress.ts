import type { Ora } from 'ora';
import type { ExportEvent, ProgressCounts } from '../export/events.js';
import { ProgressTracker, type PhaseTimes, type ProgressSnapshot } from '../progress/tracker.js';
import { printable } from './format.js';
import { barLine, finalLine, logLine, outageLine, outageRecord, progressRecord } from './progress-line.js';
import { servicePath } from '../client/base-url.js';
import { recordLine, type RecordCommand } from './json-records.js';

/** A bar on a terminal, plain lines in a log, JSON records with --json, or nothing. */
export type ProgressMode = 'spinner' | 'lines' | 'json' | 'silent';

export interface ProgressChoice {
  quiet?: boolean;
  json?: boolean;
  /** --stats-interval as given; with --json, progress records come only when it is. */
  statsIntervalMs?: number;
}

/** Seconds between the plain progress lines of a log when --stats-interval is not given. */
export const DEFAULT_STATS_INTERVAL_MS = 30_000;
/**
 * Between plain lines on a terminal that does not say how wide it is (a pseudo terminal of 0
 * columns): someone is watching it, so a line at least this often rather than the log's pace.
 */
export const WIDTHLESS_TERMINAL_INTERVAL_MS = 5_000;
/** How often the terminal line is redrawn. */
const BAR_REFRESH_MS = 250;

/**
 * A bar only on a terminal that says how wide it is: ora divides by the width, and a pseudo
 * terminal reporting 0 columns (script, some CI runners) would make it loop forever.
 */
export function progressMode(stream: NodeJS.WriteStream, choice: ProgressChoice | boolean): ProgressMode {
  const { quiet = false, json = false, statsIntervalMs } = typeof choice === 'boolean' ? { quiet: choice } : choice;
  // --json by default prints exactly one line (the summary): cron logs that parse it keep working.
  if (json) return statsIntervalMs !== undefined && statsIntervalMs > 0 ? 'json' : 'silent';
  if (quiet) return 'silent';
  return stream.isTTY && (stream.columns ?? 0) > 0 ? 'spinner' : 'lines';
}

export interface ProgressOptions {
  /** Between plain lines or JSON records (default 30 s); 0 for none. */
  intervalMs?: number;
  /** Where JSON records go (stdout, beside the summary). */
  stdout?: NodeJS.WritableStream;
  /** The command the JSON records are of. */
  command?: RecordCommand;
  now?: () => number;
}

export interface ProgressReporter {
  onEvent(event: ExportEvent): void;
  /** Live counts, shared with the summary. */
  counts: ProgressCounts;
  snapshot(): ProgressSnapshot;
  /** Durations per phase and the average rate, for the final summary. */
  phaseTimes(): PhaseTimes;
  stop(): void;
}

/**
 * Shows an export as it runs, so a long one says how far it is and how long is left: on a
 * terminal one line with percent, bar, counts, rates, time left, prototypes, retries and errors, redrawn in place by ora (synchronized output, so no
 * flicker) and cleared on stop; in a log one plain line per interval; with --json one
 * `"type":"progress"` record per interval on stdout.
 */
export async function createProgress(
  mode: ProgressMode,
  stream: NodeJS.WriteStream,
  options: ProgressOptions | number = {},
): Promise<ProgressReporter> {
  const {
    intervalMs = DEFAULT_STATS_INTERVAL_MS,
    stdout,
    command = null,
    now = Date.now,
  } = typeof options === 'number' ? { intervalMs: options } : options;
  const progressLine = (): string => recordLine(command, 'progress', progressRecord(tracker.snapshot()));
  const tracker = new ProgressTracker(now);
  const counts: ProgressCounts = {
    requests: 0,
    retries: 0,
    queued: 0,
    inFlight: 0,
    prototypes: 0,
    bytes: 0,
    errors: 0,
  };
  let spinner: Ora | undefined;
  let timer: NodeJS.Timeout | undefined;
  // Concurrency changes come by the dozen under faults: told once per progress line, not each.
  const concurrency = { changes: 0, from: 0, to: 0 };
  const concurrencyLine = (): void => {
    if (concurrency.changes === 0) return;
    const { changes, from, to } = concurrency;
    concurrency.changes = 0;
    concurrency.from = to;
    line(
      from === to
        ? `concurrency ${to} (changed ${changes} times since the last line and back)`
        : `concurrency ${from} -> ${to} (${changes} ${changes === 1 ? 'change' : 'changes'} since the last line)`,
    );
  };
  const line = (text: string): void => {
    if (mode === 'silent' || mode === 'json') return;
    if (spinner) spinner.clear();
    stream.write(`${text}\n`);
    if (spinner) spinner.render();
  };
  // The frame and a space before the text, and the last column left free so nothing wraps.
  const bar = (): string => barLine(tracker.snapshot(), Math.max(10, (stream.columns ?? 80) - 3));

  if (mode === 'spinner') {
    // ora and its dozen dependencies only for a terminal: a log or --json run starts without them.
    const { default: ora } = await import('ora');
    spinner = ora({ text: bar(), stream, discardStdin: false, isEnabled: true }).start();
    timer = setInterval(() => {
      if (spinner) spinner.text = bar();
    }, BAR_REFRESH_MS);
  } else if (mode === 'lines' && intervalMs > 0) {
    timer = setInterval(() => {
      line(logLine(tracker.snapshot()));
      concurrencyLine();
    }, intervalMs);
  } else if (mode === 'json' && intervalMs > 0 && stdout) {
    timer = setInterval(() => stdout.write(progressLine()), intervalMs);
  }
  timer?.unref();

  return {
    counts,
    snapshot: () => tracker.snapshot(),
    phaseTimes: () => tracker.phaseTimes(),
    onEvent(event) {
      tracker.onEvent(event);
      switch (event.type) {
        case 'start':
          concurrency.from = concurrency.to = event.concurrency;
          line(
            `exporting ${serviceOf(event.baseUrl)} to ${event.out} (${event.concurrency} at a time` +
              `${event.proxy ? `, through the proxy ${event.proxy}` : ''})`,
          );
          if (event.resumed > 0)
            line(
              `resuming: ${event.resumed} bodies saved by an earlier run that did not finish will be checked and reused`,
            );
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
          if (mode === 'lines')
            line(`prototype ${event.id} r${event.revision}: ${printable(event.name ?? '(no name)')}`);
          break;
        case 'error':
          counts.errors++;
          line(`error: ${event.error.source}: ${printable(event.error.message)}`);
          break;
        case 'outage':
          if (mode === 'json' && stdout) stdout.write(recordLine(command, 'outage', outageRecord(event)));
          else line(outageLine(event, now(), tracker.proxy));
          if (spinner) spinner.text = bar();
          break;
        case 'concurrency':
          concurrency.changes++;
          concurrency.to = event.value;
          break;
        case 'phase':
          // The crawl's last figures before the quieter phases after it.
          if (mode === 'lines' && event.phase === 'archive') line(logLine(tracker.snapshot()));
          if (event.phase === 'done') {
            // The last word is the whole run's: no timer line may come after it.
            if (timer) clearInterval(timer);
            timer = undefined;
            if (mode === 'lines') {
              line(finalLine(tracker.snapshot(), tracker.phaseTimes()));
              concurrencyLine();
            }
            if (mode === 'json' && stdout) stdout.write(progressLine());
          }
          if (spinner) spinner.text = bar();
          break;
        default:
          break;
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      // Clears the line: what stays on the terminal is the summary, not a stale bar.
      spinner?.stop();
      spinner = undefined;
    },
  };
}

/** The reporter for `export` and `backup`, from their flags. */
export function progressFor(
  io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream },
  flags: { quiet?: boolean; json?: boolean; statsInterval?: number },
  command: RecordCommand,
): Promise<ProgressReporter> {
  const mode = progressMode(io.stderr, {
    quiet: Boolean(flags.quiet),
    json: Boolean(flags.json),
    ...(flags.statsInterval !== undefined ? { statsIntervalMs: flags.statsInterval } : {}),
  });
  return createProgress(mode, io.stderr, {
    intervalMs: flags.statsInterval ?? lineInterval(io.stderr),
    stdout: io.stdout,
    command,
  });
}

/** Between plain progress lines: the log's pace, or a watched terminal's when it gives no width. */
export function lineInterval(stream: NodeJS.WriteStream): number {
  const widthless = stream.isTTY && !((stream.columns ?? 0) > 0);
  return widthless ? WIDTHLESS_TERMINAL_INTERVAL_MS : DEFAULT_STATS_INTERVAL_MS;
}

/** What the final summary gains from the progress figures: time per phase and the average rate. */
export function summaryTimes(times: PhaseTimes): {
  phases: { crawlMs: number; requisitesMs: number; writingMs: number };
  requestsPerSecond: number;
  bytesPerSecond: number;
} {
  return {
    phases: { crawlMs: times.crawlMs, requisitesMs: times.requisitesMs, writingMs: times.writingMs },
    requestsPerSecond: times.requestsPerSecond,
    bytesPerSecond: times.bytesPerSecond,
  };
}

/** The base URL as written, and the API address it stands for when the two differ (a base ending in /rabbit). */
function serviceOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  const path = servicePath(url.pathname);
  return path === url.pathname.replace(/\/+$/, '') ? baseUrl : `${baseUrl} (API at ${url.origin}${path}/rabbit/api/)`;
}
