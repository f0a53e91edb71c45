import { RabbitError } from './errors.js';

/** Durations as people write them in crontabs and unit files, for --max-duration and lock ages. */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `90s`, `45m`, `6h`, `1h30m`, `2d`; a bare number is seconds (as rclone and curl's --max-time
 * take it). Returns milliseconds, or throws USAGE for anything else, zero included.
 */
export function parseDuration(text: string, flag = '--max-duration'): number {
  const value = text.trim().toLowerCase();
  let total = 0;
  if (/^\d+(\.\d+)?$/.test(value)) {
    total = Number(value) * 1000;
  } else {
    const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/.test(value) ? value.match(/\d+(?:\.\d+)?(?:ms|s|m|h|d)/g) : null;
    if (!parts) throw badDuration(text, flag);
    for (const part of parts) {
      const [, amount = '', unit = ''] = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(part) ?? [];
      total += Number(amount) * (UNITS[unit] ?? Number.NaN);
    }
  }
  total = Math.round(total);
  if (!Number.isSafeInteger(total) || total <= 0) throw badDuration(text, flag);
  return total;
}

/** The shortest readable form: 1h30m, 90s, 250ms. */
export function formatDuration(ms: number): string {
  if (ms > 0 && ms < 1000) return `${ms}ms`;
  let rest = Math.round(ms / 1000);
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return rest > 0 || out === '' ? `${out}${rest}s` : out;
}

function badDuration(text: string, flag: string): RabbitError {
  return new RabbitError(
    'USAGE',
    `${flag} takes a duration such as 90s, 45m, 6h or 1h30m, not ${JSON.stringify(text)}`,
  );
}
