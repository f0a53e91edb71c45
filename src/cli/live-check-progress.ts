import type { LiveProgress } from '../live-check/live-tally.js';
import { duration } from './progress-line.js';
import { DEFAULT_STATS_INTERVAL_MS, WIDTHLESS_TERMINAL_INTERVAL_MS } from './progress.js';

/**
 * `verify --against-live` as it runs, on stderr: a plain line every 5 s on a terminal (someone is
 * watching it) and every 30 s in a log, with how many of the lists and sampled resources are
 * checked and, once it can be told, the time left.
 */
export function liveCheckProgress(
  stderr: NodeJS.WriteStream,
  now: () => number = Date.now,
): { onStart: (read: () => LiveProgress) => void; stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const started = now();
  return {
    onStart(read) {
      const intervalMs = stderr.isTTY ? WIDTHLESS_TERMINAL_INTERVAL_MS : DEFAULT_STATS_INTERVAL_MS;
      timer = setInterval(() => stderr.write(`${progressText(read(), now() - started)}\n`), intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** `progress: checked 120 of 480 (25%), 1m30s left, 30s elapsed`. */
export function progressText({ checked, total }: LiveProgress, elapsedMs: number): string {
  const percent = total === 0 ? 100 : Math.floor((checked / total) * 100);
  const left = checked > 0 && checked < total ? `, ${duration((elapsedMs / checked) * (total - checked))} left` : '';
  return `progress: checked ${checked} of ${total} (${percent}%)${left}, ${duration(elapsedMs)} elapsed`;
}
