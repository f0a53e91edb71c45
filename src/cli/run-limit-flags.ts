import { InvalidArgumentError, type Command } from 'commander';
import { isRabbitError } from '../core/errors.js';
import { STALL_DEFAULTS } from '../client/transfer-watchdog.js';
import { OUTAGE_DEFAULTS } from '../client/outage-policy.js';
import { formatDuration, parseDuration } from '../core/duration.js';
import type { ExportOptions } from '../export/export-account.js';
import { intOption } from './options.js';

/**
 * Flags that make an unattended run always end, so a nightly job never runs on, shared by `export` and `backup`:
 * curl's --speed-limit/--speed-time against bodies that trickle, rclone's --max-duration against a
 * night that runs into the working day.
 */
export interface RunLimitFlags {
  speedLimit: number;
  speedTime: number;
  maxDuration?: number;
  outagePatience?: number;
}

/** What reaching --max-duration and --outage-patience does, in a command's help. */
export interface RunLimitHelp {
  maxDuration: string;
  outagePatience: string;
}

/** Export's and backup's: what was fetched is written, marked incomplete, and the next run resumes. */
const EXPORT_LIMIT_HELP: RunLimitHelp = {
  maxDuration:
    'stop fetching after this long (e.g. 90s, 45m, 6h) and write what was fetched, marked incomplete (exit 3)',
  outagePatience:
    'how long to wait for a service that stopped answering before giving up (exit 3; run again to resume)',
};

export function addRunLimitOptions(command: Command, help: RunLimitHelp = EXPORT_LIMIT_HELP): Command {
  return command
    .option(
      '--speed-limit <bytes>',
      'a body slower than this many bytes/s for --speed-time is aborted and retried; 0 turns it off',
      intOption('--speed-limit', 0, 1_000_000_000),
      STALL_DEFAULTS.minBytesPerSecond,
    )
    .option(
      '--speed-time <seconds>',
      'how long a body may stay under --speed-limit',
      intOption('--speed-time', 1, 3600),
      STALL_DEFAULTS.windowMs / 1000,
    )
    .option('--max-duration <duration>', help.maxDuration, durationOption)
    .option(
      '--outage-patience <duration>',
      `${help.outagePatience}; 0: do not wait (default ${formatDuration(OUTAGE_DEFAULTS.patienceMs)})`,
      patienceOption,
    );
}

export function runLimitsOf(flags: RunLimitFlags): Pick<ExportOptions, 'stall' | 'maxDurationMs' | 'outagePatienceMs'> {
  return {
    stall: { minBytesPerSecond: flags.speedLimit, windowMs: flags.speedTime * 1000 },
    ...(flags.maxDuration !== undefined ? { maxDurationMs: flags.maxDuration } : {}),
    ...(flags.outagePatience !== undefined ? { outagePatienceMs: flags.outagePatience } : {}),
  };
}

/** The flags again, for a command line the user can copy (resume hints). */
export function runLimitArgs(flags: RunLimitFlags): string[] {
  const args: string[] = [];
  if (flags.speedLimit !== STALL_DEFAULTS.minBytesPerSecond) args.push('--speed-limit', String(flags.speedLimit));
  if (flags.speedTime !== STALL_DEFAULTS.windowMs / 1000) args.push('--speed-time', String(flags.speedTime));
  if (flags.maxDuration !== undefined) args.push('--max-duration', formatDuration(flags.maxDuration));
  if (flags.outagePatience !== undefined) args.push('--outage-patience', formatDuration(flags.outagePatience));
  return args;
}

/** Like --max-duration, and `0` too: no pause, every failure is the resource's own (the behaviour before pauses). */
export function patienceOption(value: string): number {
  if (/^\s*0+(\.0+)?(ms|s|m|h|d)?\s*$/i.test(value)) return 0;
  try {
    return parseDuration(value, '--outage-patience');
  } catch (error) {
    throw new InvalidArgumentError(isRabbitError(error) ? error.message : String(error));
  }
}

function durationOption(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(isRabbitError(error) ? error.message : String(error));
  }
}
