import { InvalidArgumentError, Option, type Command } from 'commander';
import { RETRY_DEFAULTS } from '../client/retry-policy.js';
import type { SizeCaps } from '../crawl/crawl-account.js';
import { EXPORT_DEFAULTS } from '../export/export-defaults.js';
import { RabbitError } from '../core/errors.js';
import { intOption } from './options.js';

export const DEFAULT_BASE_URL = 'https://pidoco.com';

/**
 * How to reach the service and how hard to push it: the same flags on `export`, `backup` and
 * `restore`. Only what defining the flags needs is imported here (`--help` loads this module);
 * turning them into options, which reads keys and the proxy, is service-options.ts.
 */
export interface ServiceFlags {
  baseUrl?: string;
  apiKeyFile?: string;
  concurrency: number;
  timeout: number;
  retries: number;
  maxRps?: number;
  maxSize?: Partial<SizeCaps>;
  allowInsecureHttp?: boolean;
  /** Only to refuse it with a reason (refuseApiKeyFlag); never used, never echoed. */
  apiKey?: string;
}

/**
 * A key typed on the command line is refused before any key is read from anywhere else: it would
 * stay in the shell history and the process list. The error guide says where a key goes instead.
 */
export function refuseApiKeyFlag(flags: Pick<ServiceFlags, 'apiKey'>): void {
  if (flags.apiKey !== undefined) throw new RabbitError('API_KEY_FLAG', 'there is no --api-key flag');
}

/** What a command's help shows the service flags default to: the command's own, which are what apply. */
export interface ServiceFlagDefaults {
  concurrency: number;
  timeoutMs: number;
  /** What --max-size caps for the command, and its default. */
  maxSizeHelp: string;
}

/** Export's, which backup and verify --against-live apply too. */
const EXPORT_FLAG_DEFAULTS: ServiceFlagDefaults = {
  concurrency: EXPORT_DEFAULTS.concurrency,
  timeoutMs: EXPORT_DEFAULTS.timeoutMs,
  maxSizeHelp: 'body size caps in MiB, of bodies as decoded, e.g. "png=512,json=64" (default json=32,html=32,png=256)',
};

/**
 * The service flags; `baseUrlDefault` says where the base URL comes from when neither --base-url
 * nor RABBIT_BASE_URL gives it, for a command where that is not the public service.
 */
export function addServiceOptions(
  command: Command,
  baseUrlDefault = DEFAULT_BASE_URL,
  defaults: ServiceFlagDefaults = EXPORT_FLAG_DEFAULTS,
): Command {
  return (
    command
      .option('--base-url <url>', `service base URL (env RABBIT_BASE_URL, default ${baseUrlDefault})`)
      .option(
        '--api-key-file <path>',
        'file with the API key(s), one per line (default: env RABBIT_API_KEY, comma-separated)',
      )
      .option(
        '-c, --concurrency <n>',
        'requests in flight at most',
        intOption('--concurrency', 1, 256),
        defaults.concurrency,
      )
      .option(
        '--timeout <seconds>',
        'connect and idle timeout per request',
        intOption('--timeout', 1, 3600),
        defaults.timeoutMs / 1000,
      )
      .option(
        '--retries <n>',
        'attempts per resource before it is recorded as failed',
        intOption('--retries', 1, 100),
        RETRY_DEFAULTS.attempts,
      )
      .option('--max-rps <n>', 'requests per second at most', intOption('--max-rps', 1, 100_000))
      .option('--max-size <caps>', defaults.maxSizeHelp, parseSizeCaps)
      .option(
        '--allow-insecure-http',
        'allow an http:// --base-url to a host that is not loopback: the key crosses the network in clear text',
      )
      // Not an option: known only so that reaching for it gets the reason and the two ways that exist.
      .addOption(new Option('--api-key <key>').hideHelp())
  );
}

/** The flags again, for a command line the user can copy (resume hints); never a key. */
export function serviceArgs(flags: ServiceFlags): string[] {
  const args: string[] = [];
  if (flags.baseUrl) args.push('--base-url', flags.baseUrl);
  if (flags.apiKeyFile) args.push('--api-key-file', flags.apiKeyFile);
  if (flags.concurrency !== EXPORT_DEFAULTS.concurrency) args.push('--concurrency', String(flags.concurrency));
  if (flags.timeout !== EXPORT_DEFAULTS.timeoutMs / 1000) args.push('--timeout', String(flags.timeout));
  if (flags.retries !== RETRY_DEFAULTS.attempts) args.push('--retries', String(flags.retries));
  if (flags.maxRps) args.push('--max-rps', String(flags.maxRps));
  if (flags.allowInsecureHttp) args.push('--allow-insecure-http');
  if (flags.maxSize) {
    args.push(
      '--max-size',
      Object.entries(flags.maxSize)
        .map(([kind, bytes]) => `${kind}=${Math.round(bytes / 1024 / 1024)}`)
        .join(','),
    );
  }
  return args;
}

/** `--max-size png=512,json=64`: MiB per kind of body. */
function parseSizeCaps(value: string): Partial<SizeCaps> {
  const caps: Partial<SizeCaps> = {};
  for (const part of value.split(',')) {
    const match = /^\s*(json|html|png)\s*=\s*(\d+)\s*$/.exec(part);
    if (!match || Number(match[2]) < 1)
      throw new InvalidArgumentError(
        '--max-size takes kind=MiB pairs, e.g. "png=512,json=64" (kinds: json, html, png)',
      );
    const kind = match[1] as keyof SizeCaps;
    const mib = Number(match[2]);
    // JSON and HTML are read whole as text, and Node holds no string much past 512 MiB: a larger
    // cap would let one body end the run instead of being recorded. PNG streams to disk.
    if (kind !== 'png' && mib > MAX_TEXT_MIB)
      throw new InvalidArgumentError(
        `--max-size ${kind} can be at most ${MAX_TEXT_MIB} (MiB): it is read whole as text`,
      );
    caps[kind] = mib * 1024 * 1024;
  }
  return caps;
}

const MAX_TEXT_MIB = 256;
