import { InvalidArgumentError, type Command } from 'commander';
import { RETRY_DEFAULTS } from '../../client/retry-policy.js';
import type { SizeCaps } from '../../crawl/crawl-account.js';
import { exportAccount, EXPORT_DEFAULTS, type ExportResult } from '../../export/export-account.js';
import { outputPaths } from '../../export/output.js';
import { readKeys } from '../keys.js';
import { EXIT } from '../exit-codes.js';
import { mib, printable, seconds, shellQuote } from '../format.js';
import { createProgress } from '../progress.js';
import { runAction, withInterrupts, type CliIO } from '../run.js';
import { intOption } from '../options.js';
import { collectPrototype, parseFormats, SELECTION_HELP, selectionArgs, selectionOf, type SelectionFlags } from '../export-flags.js';
import { RabbitError, isRabbitError } from '../../core/errors.js';

export const DEFAULT_BASE_URL = 'https://pidoco.com';

interface ExportFlags extends SelectionFlags {
  out: string;
  baseUrl?: string;
  apiKeyFile?: string;
  concurrency: number;
  timeout: number;
  retries: number;
  maxRps?: number;
  maxSize?: Partial<SizeCaps>;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
}

export function registerExport(program: Command, io: CliIO): void {
  program
    .command('export')
    .description('export everything the API key can read into one zip')
    .requiredOption('-o, --out <file.zip>', 'the archive to write')
    .option('--base-url <url>', `service base URL (env RABBIT_BASE_URL, default ${DEFAULT_BASE_URL})`)
    .option('--api-key-file <path>', 'file with the API key(s), one per line (default: env RABBIT_API_KEY)')
    .option('-c, --concurrency <n>', 'requests in flight at most', intOption('--concurrency', 1, 256), EXPORT_DEFAULTS.concurrency)
    .option('--timeout <seconds>', 'connect and idle timeout per request', intOption('--timeout', 1, 3600), EXPORT_DEFAULTS.timeoutMs / 1000)
    .option('--retries <n>', 'attempts per resource before it is recorded as failed', intOption('--retries', 1, 100), RETRY_DEFAULTS.attempts)
    .option('--max-rps <n>', 'requests per second at most', intOption('--max-rps', 1, 100_000))
    .option('--max-size <caps>', 'body size caps in MiB, e.g. "png=512,json=64" (default json=32,html=32,png=256)', parseSizeCaps)
    .option('-f, --force', 'replace an existing archive at --out')
    .option('--json', 'print one JSON summary line on stdout')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--since <prev.zip>', SELECTION_HELP.since)
    .option('--prototype <id>', SELECTION_HELP.prototype, collectPrototype)
    .option('--formats <list>', SELECTION_HELP.formats, parseFormats)
    .addHelpText(
      'after',
      `
Examples:
  RABBIT_API_KEY=... rabbit-export export --out team.zip
  rabbit-export export --out team.zip --api-key-file ~/.rabbit-key --concurrency 4
  rabbit-export export --out nightly.zip --json --quiet      # for cron: one JSON line
  rabbit-export export --out today.zip --since yesterday.zip # fetch only what changed
  rabbit-export export --out two.zip --prototype 3 --prototype 17 --formats json`,
    )
    .action((flags: ExportFlags) =>
      runAction(io, flags.json ?? false, async () => {
        const keys = await readKeys(flags.apiKeyFile, io.env);
        const baseUrl = flags.baseUrl ?? io.env['RABBIT_BASE_URL'] ?? DEFAULT_BASE_URL;
        const progress = createProgress(
          flags.quiet || flags.json ? 'silent' : io.stderr.isTTY ? 'spinner' : 'lines',
          io.stderr,
        );
        const started = Date.now();
        let result: ExportResult;
        try {
          result = await withInterrupts(io, (signal) =>
            exportAccount({
              out: flags.out,
              baseUrl,
              keys,
              concurrency: flags.concurrency,
              timeoutMs: flags.timeout * 1000,
              retry: { attempts: flags.retries },
              ...(flags.maxRps ? { maxRps: flags.maxRps } : {}),
              ...(flags.maxSize ? { caps: flags.maxSize } : {}),
              force: flags.force ?? false,
              signal,
              onEvent: progress.onEvent,
              ...selectionOf(flags),
            }),
          );
        } catch (error) {
          if (isRabbitError(error, 'INTERRUPTED')) {
            throw new RabbitError('INTERRUPTED', `interrupted; nothing was written to ${outputPaths(flags.out).out}. ${resumeHint(flags)}`);
          }
          throw error;
        } finally {
          progress.stop();
        }
        const code = result.complete ? EXIT.ok : EXIT.incomplete;
        const summary = {
          ok: result.complete,
          exitCode: code,
          out: result.out,
          complete: result.complete,
          prototypes: Object.keys(result.manifest.prototypes).length,
          files: result.manifest.stats?.files ?? 0,
          bytes: result.archiveBytes,
          requests: result.manifest.stats?.requests ?? 0,
          retries: result.manifest.stats?.retries ?? 0,
          errors: result.manifest.errors.length,
          durationMs: Date.now() - started,
          peakRssBytes: process.resourceUsage().maxRSS * 1024,
        };
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(summary)}\n`);
          return code;
        }
        if (!flags.quiet) {
          io.stdout.write(
            `${result.complete ? 'complete' : 'INCOMPLETE'}: ${summary.prototypes} prototypes, ${summary.files} files, ` +
              `${mib(summary.bytes)} in ${seconds(summary.durationMs)} (${summary.requests} requests, ${summary.retries} retries)\n` +
              `archive: ${result.out}\n`,
          );
        }
        if (!result.complete) {
          const shown = result.manifest.errors.slice(0, 20);
          io.stderr.write(`${result.manifest.errors.length} resources could not be archived:\n`);
          for (const error of shown) {
            io.stderr.write(`  ${error.source}${error.status ? ` (HTTP ${error.status})` : ''}: ${printable(error.message)}\n`);
          }
          if (result.manifest.errors.length > shown.length) {
            io.stderr.write(`  ... and ${result.manifest.errors.length - shown.length} more (see manifest.json "errors")\n`);
          }
          // --since the incomplete archive itself: what it holds is copied (verified), only the rest is fetched.
          io.stderr.write(`to fetch only what is missing: ${exportCommand(flags, result.out)}\n`);
        }
        return code;
      }),
    );
}

/** `--max-size png=512,json=64`: MiB per kind of body. */
function parseSizeCaps(value: string): Partial<SizeCaps> {
  const caps: Partial<SizeCaps> = {};
  for (const part of value.split(',')) {
    const match = /^\s*(json|html|png)\s*=\s*(\d+)\s*$/.exec(part);
    if (!match || Number(match[2]) < 1) throw new InvalidArgumentError('--max-size takes kind=MiB pairs, e.g. "png=512,json=64" (kinds: json, html, png)');
    caps[match[1] as keyof SizeCaps] = Number(match[2]) * 1024 * 1024;
  }
  return caps;
}

function resumeHint(flags: ExportFlags): string {
  return `Run the same command again to resume: ${exportCommand(flags)}`;
}

function exportCommand(flags: ExportFlags, fillFrom?: string): string {
  const args = ['rabbit-export', 'export', '--out', flags.out];
  if (flags.baseUrl) args.push('--base-url', flags.baseUrl);
  if (flags.apiKeyFile) args.push('--api-key-file', flags.apiKeyFile);
  if (flags.concurrency !== EXPORT_DEFAULTS.concurrency) args.push('--concurrency', String(flags.concurrency));
  args.push(...selectionArgs(fillFrom === undefined ? flags : { ...flags, since: fillFrom }));
  if (fillFrom !== undefined || flags.force) args.push('--force');
  return args.map(shellQuote).join(' ');
}
