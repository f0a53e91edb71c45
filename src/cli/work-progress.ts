import type { Ora } from 'ora';
import type { WorkProgress } from '../core/counted-work.js';
import { WorkTracker } from '../progress/work-tracker.js';
import { progressMode, WIDTHLESS_TERMINAL_INTERVAL_MS, type ProgressChoice } from './progress.js';
import { workBar, workLine, type WorkWords } from './work-line.js';
import { every as everyOn, systemEvery, type RunTimer } from '../core/run-timer.js';

/**
 * When counted work is shown. These commands (verify, convert, search, restore, the live check)
 * run for minutes, not the hours of an export, and have no --stats-interval: off a terminal, or on
 * one that gives no width, a plain line every 5 s is what someone watching the run or tailing its
 * log needs to see that it moves and when it ends.
 */
export const WORK_PROGRESS_DEFAULTS = {
  /** A run done sooner shows nothing: a bar flashing for half a second is noise. */
  showAfterMs: 1_000,
  barRefreshMs: 250,
  /** How often the rate is sampled between plain lines, so the first line already has a time left. */
  sampleMs: 1_000,
  lineIntervalMs: WIDTHLESS_TERMINAL_INTERVAL_MS,
} as const;

export interface WorkDisplay {
  /** The work as far as it has come; cheap enough to call for every entry. */
  set(progress: WorkProgress): void;
  /** Reads the work's progress at each update instead, from a core that keeps its own count. */
  follow(read: () => WorkProgress): void;
  /** Clears the bar (what stays on the terminal is the command's own report) and stops the timers. */
  stop(): void;
}

const SILENT: WorkDisplay = { set() {}, follow() {}, stop() {} };

/**
 * Shows counted work on stderr, the one way for every command but export and backup (whose crawl
 * has its own figures, progress.ts): on a terminal that says how wide it is one line with percent,
 * bar, count and time left, redrawn in place by ora and cleared at the end (ora also keeps the
 * command's own lines on stdout and stderr clear of it); elsewhere a plain line every 5 s; nothing
 * with --quiet or --json, whose stdout carries only records and whose stderr only what went wrong.
 * Nothing is ever written to stdout here.
 */
export async function workProgress(
  io: { stderr: NodeJS.WriteStream; clock?: { now?: () => number; timer?: RunTimer } },
  choice: Pick<ProgressChoice, 'quiet' | 'json'>,
  words: WorkWords,
  options: { now?: () => number } & Partial<Record<keyof typeof WORK_PROGRESS_DEFAULTS, number>> = {},
): Promise<WorkDisplay> {
  const { stderr } = io;
  const mode = progressMode(stderr, { quiet: choice.quiet ?? false, json: choice.json ?? false });
  if (mode !== 'spinner' && mode !== 'lines') return SILENT;
  const { now = io.clock?.now ?? Date.now, ...timing } = options;
  const { showAfterMs, barRefreshMs, sampleMs, lineIntervalMs } = { ...WORK_PROGRESS_DEFAULTS, ...timing };
  // ora and its dependencies only for a terminal: a log or --json run starts without them.
  const ora = mode === 'spinner' ? (await import('ora')).default : undefined;
  const tracker = new WorkTracker(now);
  const started = now();
  const every = mode === 'spinner' ? barRefreshMs : sampleMs;
  const ticksPerLine = Math.max(1, Math.round(lineIntervalMs / sampleMs));
  let latest: WorkProgress | undefined;
  let read = (): WorkProgress | undefined => latest;
  let spinner: Ora | undefined;
  let lastLine = started;
  let ticks = 0;
  let due = started + every;
  let stopped = false;

  // A line once the timer has ticked for an interval, or once the clock says one is due (the
  // timer held back by work that keeps the thread busy).
  const lineDue = (at: number): boolean => ticks >= ticksPerLine || at - lastLine >= lineIntervalMs;
  const tick = (): void => {
    const at = now();
    const snapshot = tracker.sample(read());
    if (mode === 'lines') {
      if (lineDue(at)) {
        lastLine = at;
        ticks = 0;
        stderr.write(`${workLine(snapshot, words)}\n`);
      }
      // The next sample, and no later than the next line.
      due = Math.min(at + every, lastLine + lineIntervalMs);
      return;
    }
    due = at + every;
    if (at - started < showAfterMs && ticks * every < showAfterMs) return;
    if (!ora) return;
    // The frame and a space before the text, and the last column left free so nothing wraps.
    const text = workBar(snapshot, words, Math.max(10, (stderr.columns ?? 80) - 3));
    if (!spinner) spinner = ora({ text, stream: stderr, discardStdin: false, isEnabled: true }).start();
    else {
      spinner.text = text;
      spinner.render();
    }
  };
  // The timer for work that waits (on the network, on a slow disk); `set` for work that keeps the
  // thread busy between its reports, which would hold the timer back past its time. On the run's
  // timer when it has one: a test's clock then steps the display instead of waiting for it.
  const onTick = (): void => {
    ticks++;
    tick();
  };
  const stopTicks = io.clock?.timer ? everyOn(io.clock.timer, every, onTick) : systemEvery(every, onTick);

  return {
    set(progress) {
      latest = progress;
      if (!stopped && now() >= due) tick();
    },
    follow(reader) {
      read = reader;
    },
    stop() {
      stopped = true;
      stopTicks();
      spinner?.stop();
      spinner = undefined;
    },
  };
}
