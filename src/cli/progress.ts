import type { Ora } from 'ora';
import type { ExportEvent, ProgressCounts } from '../export/events.js';
import { ProgressTracker, type PhaseTimes, type ProgressSnapshot } from '../progress/tracker.js';
import { printable } from './format.js';
import { barLine, finalLine, logLine, outageLine, outageRecord, progressRecord } from './progress-line.js';
import { servicePath } from '../client/base-url.js';
import { recordLine, type RecordCommand } from './json-records.js';
import { every, systemEvery, type RunTimer } from '../core/run-timer.js';

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
  /** The run's timer, which the bar's redraws and the lines keep time on; the system's when absent. */
  timer?: RunTimer;
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
    timer,
  } = typeof options === 'number' ? { intervalMs: options } : options;
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
  const screen = new ProgressScreen(mode, stream, tracker, { stdout, command, now, timer });
  await screen.start(intervalMs);
  return {
    counts,
    snapshot: () => tracker.snapshot(),
    phaseTimes: () => tracker.phaseTimes(),
    onEvent(event) {
      tracker.onEvent(event);
      countEvent(counts, event);
      screen.show(event);
    },
    stop: () => screen.stop(),
  };
}

/** The live counts the summary shares, moved on by one event. */
function countEvent(counts: ProgressCounts, event: ExportEvent): void {
  switch (event.type) {
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
      break;
    case 'error':
      counts.errors++;
      break;
    default:
      break;
  }
}

/** Where the JSON records go and what they are of, and the clock the outage lines read and the timer it keeps. */
interface ScreenOutput {
  stdout: NodeJS.WritableStream | undefined;
  command: RecordCommand;
  now: () => number;
  timer: RunTimer | undefined;
}

/** What the run shows: the bar or the lines on `stream`, or the JSON records on stdout. */
class ProgressScreen {
  private spinner: Ora | undefined;
  /** Stops the redraws or the lines. */
  private stopTicks: (() => void) | undefined;
  // Concurrency changes come by the dozen under faults: told once per progress line, not each.
  private readonly concurrency = { changes: 0, from: 0, to: 0 };

  constructor(
    private readonly mode: ProgressMode,
    private readonly stream: NodeJS.WriteStream,
    private readonly tracker: ProgressTracker,
    private readonly output: ScreenOutput,
  ) {}

  /** The bar redrawn, or a line or record every `intervalMs`. */
  async start(intervalMs: number): Promise<void> {
    const { mode, output } = this;
    if (mode === 'spinner') {
      // ora and its dozen dependencies only for a terminal: a log or --json run starts without them.
      const { default: ora } = await import('ora');
      this.spinner = ora({ text: this.bar(), stream: this.stream, discardStdin: false, isEnabled: true }).start();
      this.stopTicks = this.every(BAR_REFRESH_MS, () => {
        if (this.spinner) this.spinner.text = this.bar();
      });
    } else if (mode === 'lines' && intervalMs > 0) {
      this.stopTicks = this.every(intervalMs, () => {
        this.line(logLine(this.tracker.snapshot()));
        this.concurrencyLine();
      });
    } else if (mode === 'json' && intervalMs > 0 && output.stdout) {
      const stdout = output.stdout;
      this.stopTicks = this.every(intervalMs, () => stdout.write(this.progressLine()));
    }
  }

  /** On the run's timer when it has one: a test's clock then steps the lines instead of waiting for them. */
  private every(ms: number, tick: () => void): () => void {
    return this.output.timer ? every(this.output.timer, ms, tick) : systemEvery(ms, tick);
  }

  show(event: ExportEvent): void {
    const { mode, output } = this;
    switch (event.type) {
      case 'start':
        this.concurrency.from = this.concurrency.to = event.concurrency;
        this.line(
          `exporting ${serviceOf(event.baseUrl)} to ${printable(event.out)} (${event.concurrency} at a time` +
            `${event.proxy ? `, through the proxy ${event.proxy}` : ''})`,
        );
        if (event.resumed > 0)
          this.line(
            `resuming: ${event.resumed} bodies saved by an earlier run that did not finish will be checked and reused`,
          );
        break;
      case 'journal-set-aside':
        this.line(`the saved progress of an earlier run was set aside (${event.reason}); starting afresh`);
        break;
      case 'prototype':
        if (mode === 'lines')
          this.line(`prototype ${event.id} r${event.revision}: ${printable(event.name ?? '(no name)')}`);
        break;
      case 'error':
        this.line(`error: ${event.error.source}: ${printable(event.error.message)}`);
        break;
      case 'outage':
        if (mode === 'json' && output.stdout)
          output.stdout.write(recordLine(output.command, 'outage', outageRecord(event)));
        else this.line(outageLine(event, output.now(), this.tracker.proxy));
        if (this.spinner) this.spinner.text = this.bar();
        break;
      case 'concurrency':
        this.concurrency.changes++;
        this.concurrency.to = event.value;
        break;
      case 'phase':
        // The crawl's last figures before the quieter phases after it.
        if (mode === 'lines' && event.phase === 'archive') this.line(logLine(this.tracker.snapshot()));
        if (event.phase === 'done') this.finish();
        if (this.spinner) this.spinner.text = this.bar();
        break;
      default:
        break;
    }
  }

  stop(): void {
    this.stopTicks?.();
    this.stopTicks = undefined;
    // Clears the line: what stays on the terminal is the summary, not a stale bar.
    this.spinner?.stop();
    this.spinner = undefined;
  }

  /** The last word is the whole run's: no timer line may come after it. */
  private finish(): void {
    this.stopTicks?.();
    this.stopTicks = undefined;
    if (this.mode === 'lines') {
      this.line(finalLine(this.tracker.snapshot(), this.tracker.phaseTimes()));
      this.concurrencyLine();
    }
    if (this.mode === 'json' && this.output.stdout) this.output.stdout.write(this.progressLine());
  }

  private line(text: string): void {
    if (this.mode === 'silent' || this.mode === 'json') return;
    if (this.spinner) this.spinner.clear();
    this.stream.write(`${text}\n`);
    if (this.spinner) this.spinner.render();
  }

  private concurrencyLine(): void {
    const { concurrency } = this;
    if (concurrency.changes === 0) return;
    const { changes, from, to } = concurrency;
    concurrency.changes = 0;
    concurrency.from = to;
    this.line(
      from === to
        ? `concurrency ${to} (changed ${changes} times since the last line and back)`
        : `concurrency ${from} -> ${to} (${changes} ${changes === 1 ? 'change' : 'changes'} since the last line)`,
    );
  }

  /** The frame and a space before the text, and the last column left free so nothing wraps. */
  private bar(): string {
    return barLine(this.tracker.snapshot(), Math.max(10, (this.stream.columns ?? 80) - 3));
  }

  private progressLine(): string {
    return recordLine(this.output.command, 'progress', progressRecord(this.tracker.snapshot()));
  }
}

/** The reporter for `export` and `backup`, from their flags, on the run's clock when it has one. */
export function progressFor(
  io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; clock?: { now?: () => number; timer?: RunTimer } },
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
    ...(io.clock?.now ? { now: io.clock.now } : {}),
    ...(io.clock?.timer ? { timer: io.clock.timer } : {}),
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
