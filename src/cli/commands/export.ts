import { resolve } from 'node:path';
import type { Command } from 'commander';
import { mib, plural, printable, seconds, shellQuote } from '../format.js';
import type { ExportResult } from '../../export/export-account.js';
import { addServiceOptions, serviceArgs, type ServiceFlags } from '../service-flags.js';
import { parseStatsInterval, STATS_INTERVAL_HELP } from '../progress-flags.js';
import type { CliIO } from '../run.js';
import {
  collectPrototype,
  parseFormats,
  SELECTION_HELP,
  selectionArgs,
  selectionOf,
  type SelectionFlags,
} from '../export-flags.js';
import { addRunLimitOptions, runLimitArgs, runLimitsOf, type RunLimitFlags } from '../run-limit-flags.js';

interface ExportFlags extends SelectionFlags, ServiceFlags, RunLimitFlags {
  out: string;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
  statsInterval?: number;
}

export function registerExport(program: Command, io: CliIO): void {
  addRunLimitOptions(
    addServiceOptions(
      program
        .command('export')
        .description('export everything the API key can read into one zip')
        .requiredOption('-o, --out <file.zip>', 'the archive to write'),
    ),
  )
    .option('-f, --force', 'replace an existing archive at --out')
    .option('--json', 'print one JSON summary line on stdout')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--stats-interval <duration>', STATS_INTERVAL_HELP, parseStatsInterval)
    .option('--since <prev.zip>', SELECTION_HELP.since)
    .option('--prototype <id>', SELECTION_HELP.prototype, collectPrototype)
    .option('--formats <list>', SELECTION_HELP.formats, parseFormats)
    .addHelpText(
      'after',
      `
Examples:
  rabbit-export export --out team.zip           # the key from RABBIT_API_KEY
  rabbit-export export --out team.zip --api-key-file ~/.rabbit-key --concurrency 4
  rabbit-export export --out nightly.zip --json --quiet      # for cron: one JSON line
  rabbit-export export --out big.zip --json --stats-interval 5m # progress records, then the summary
  rabbit-export export --out today.zip --since yesterday.zip # fetch only what changed
  rabbit-export export --out two.zip --prototype 3 --prototype 17 --formats json`,
    )
    .action(async (flags: ExportFlags) => {
      const { runLongCommand } = await import('../long-run.js');
      let keyPlaces: string[] = [];
      await runLongCommand(io, flags, {
        async load() {
          const [{ exportAccount }, { readKeySources }, { checkOutputFile }] = await Promise.all([
            import('../../export/export-account.js'),
            import('../keys.js'),
            import('../output-path.js'),
          ]);
          await checkOutputFile(flags.out, { flag: '--out', force: flags.force ?? false });
          // Where each key was written, to name a refused one by its line rather than show it.
          keyPlaces = (await readKeySources(flags.apiKeyFile, io.env)).map((source) => source.where);
          return ({ service, signal, onEvent }) =>
            exportAccount({
              out: flags.out,
              ...service,
              force: flags.force ?? false,
              signal,
              onEvent,
              ...selectionOf(flags),
              ...runLimitsOf(flags),
            });
        },
        interrupted: () => `interrupted; nothing was written to ${resolve(flags.out)}. ${resumeHint(flags)}`,
        complete: (result) => result.complete,
        summary: (result, times) => ({
          out: result.out,
          complete: result.complete,
          prototypes: result.prototypes.total,
          files: result.stats.files,
          bytes: result.archiveBytes,
          requests: result.stats.requests,
          retries: result.stats.retries,
          errors: result.errorCount,
          deadlineReached: result.deadlineReached,
          ...times,
          peakRssBytes: process.resourceUsage().maxRSS * 1024,
        }),
        describe: (result, summary, timeLine) =>
          `${result.complete ? 'complete' : 'INCOMPLETE'}: ${summary.prototypes} prototypes, ${summary.files} files, ` +
          `${mib(summary.bytes)} in ${seconds(summary.durationMs)} (${summary.requests} requests, ${summary.retries} retries)\n` +
          `archive: ${result.out}\n` +
          `time: ${timeLine}\n`,
        warnings: (result) => failureReport(flags, result, keyPlaces),
      });
    });
}

function failureReport(flags: ExportFlags, result: ExportResult, keyPlaces: readonly string[]): string {
  let text = '';
  if (result.deadlineReached)
    text += 'stopped fetching at --max-duration; the archive holds what was fetched until then\n';
  if (!result.complete) {
    const shown = result.errors;
    text += `${plural(result.errorCount, 'resource')} could not be archived:\n`;
    for (const error of shown)
      text += `  ${error.source}${error.status ? ` (HTTP ${error.status})` : ''}: ${printable(error.message)}\n`;
    if (result.errorCount > shown.length)
      text += `  ... and ${result.errorCount - shown.length} more (see manifest.json "errors")\n`;
    // A refused key is refused again on the next run: fetching "what is missing" cannot help
    // until the key is fixed, so that comes first.
    const refused = refusedKeyPlaces(result, keyPlaces);
    for (const place of refused) text += `the API key on ${place} was refused: fix or remove it\n`;
    // --since the incomplete archive itself: what it holds is copied (verified), only the rest is fetched.
    text +=
      refused.length > 0
        ? `then fetch only what is missing: ${exportCommand(flags, result.out)}\n`
        : `to fetch only what is missing: ${exportCommand(flags, result.out)}\n`;
  }
  return text;
}

/** Where the refused keys were written; the crawl names a refused key by its number among the keys. */
function refusedKeyPlaces(result: ExportResult, keyPlaces: readonly string[]): string[] {
  return result.errors.flatMap((error) => {
    const number = error.code === 'KEY_REFUSED' ? /API key number (\d+)/.exec(error.message)?.[1] : undefined;
    if (number === undefined) return [];
    return [keyPlaces[Number(number) - 1] ?? `API key number ${number}`];
  });
}

function resumeHint(flags: ExportFlags): string {
  return `Run the same command again to resume: ${exportCommand(flags)}`;
}

function exportCommand(flags: ExportFlags, fillFrom?: string): string {
  const args = ['rabbit-export', 'export', '--out', flags.out, ...serviceArgs(flags)];
  args.push(...selectionArgs(fillFrom === undefined ? flags : { ...flags, since: fillFrom }), ...runLimitArgs(flags));
  if (fillFrom !== undefined || flags.force) args.push('--force');
  return args.map(shellQuote).join(' ');
}
