import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { RabbitError } from '../core/errors.js';
import { shellQuote, shellWords } from '../core/shell-quote.js';

/** --healthcheck-url and --metrics-file, for `export` and `backup`. */
export interface MonitorFlags {
  healthcheckUrl?: string;
  metricsFile?: string;
}

export const MONITOR_HELP = {
  healthcheckUrl:
    'ping URL/start when the run starts, URL when it ends complete, URL/<exit code> when not (healthchecks.io style), each with the JSON summary as body (or set RABBIT_HEALTHCHECK_URL: arguments show in ps)',
  metricsFile:
    "write the last run's metrics to this file (Prometheus text format, for node_exporter's textfile collector)",
} as const;

/**
 * Where the check's URL may come from besides the flag. The URL is a secret (anyone who has it can
 * report the backup as done), and arguments show in `ps` to every user of the machine.
 */
export const HEALTHCHECK_URL_ENV = 'RABBIT_HEALTHCHECK_URL';

/**
 * The monitor flags with the environment's URL when the flag is not given (the flag wins, as
 * --base-url does over RABBIT_BASE_URL); a malformed URL there is a usage error.
 */
export function monitorFlagsOf(flags: MonitorFlags, env: NodeJS.ProcessEnv): MonitorFlags {
  const fromEnv = env[HEALTHCHECK_URL_ENV]?.trim();
  if (flags.healthcheckUrl !== undefined || !fromEnv) return flags;
  try {
    return { ...flags, healthcheckUrl: parsePingUrl(fromEnv) };
  } catch (error) {
    throw new RabbitError('USAGE', `${HEALTHCHECK_URL_ENV}: ${(error as Error).message}`);
  }
}

/** Checked when the flags are read, so a typo is a usage error and not a night that pings nowhere. */
function parsePingUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not echoed: the URL is the check's secret.
    throw new InvalidArgumentError('the healthcheck URL is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('give an http:// or https:// URL');
  return value;
}

/**
 * Checked when the flags are read too: the file is written only when the run ends, and a folder
 * that is not there would leave the alert on the last success without a series to fire on.
 */
function parseMetricsFile(value: string): string {
  if (value === '') throw new InvalidArgumentError('give the path of a file');
  const path = resolve(value);
  const folder = dirname(path);
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory())
    throw new InvalidArgumentError(
      `the folder ${folder} does not exist; create it first (${shellWords('mkdir', '-p', folder)})`,
    );
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory())
    throw new InvalidArgumentError(
      `${path} is a folder; give the path of a file in it, e.g. ${shellQuote(join(path, 'rabbit.prom'))}`,
    );
  return value;
}

export function addMonitorOptions(command: Command): Command {
  return command
    .option('--healthcheck-url <url>', MONITOR_HELP.healthcheckUrl, parsePingUrl)
    .option('--metrics-file <file.prom>', MONITOR_HELP.metricsFile, parseMetricsFile);
}
