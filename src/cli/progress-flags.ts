import { InvalidArgumentError } from 'commander';

/** How often progress is reported into logs and --json: `--stats-interval 30s` (rclone's --stats). */
export const STATS_INTERVAL_HELP =
  'with stderr not a terminal, one progress line this often (default 30s; 0 for none); with --json, one "type":"progress" record this often on stdout (none unless given). e.g. 10s, 5m';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `10s`, `5m`, `1h`; a bare number is seconds. 0 turns the periodic output off. */
export function parseStatsInterval(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  const ms = match ? Math.round(Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000)) : NaN;
  if (!Number.isFinite(ms) || (ms !== 0 && ms < 100) || ms > 24 * 3_600_000) {
    throw new InvalidArgumentError('--stats-interval takes a duration from 100ms to 24h, e.g. 30s, 5m or 0 for none');
  }
  return ms;
}
