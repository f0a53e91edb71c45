import { extname, resolve } from 'node:path';
import type { Command } from 'commander';
import { bodiesText, mib, plural, printable, seconds, shellQuote } from '../format.js';
import { clockTime, outageDescription, outageSummary } from '../progress-line.js';
import type { ExportResult } from '../../export/export-account.js';
import type { ChecksummedResult } from '../../export/checksummed-export.js';
import type { LongCommand, RunParts, RunTimes } from '../long-run.js';
import { addServiceOptions, refuseApiKeyFlag, serviceArgs, type ServiceFlags } from '../service-flags.js';
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
import { addMonitorOptions, type MonitorFlags } from '../monitor-flags.js';
import { RabbitError } from '../../core/errors.js';

interface ExportFlags extends SelectionFlags, ServiceFlags, RunLimitFlags, MonitorFlags {
  out: string;
  workDir?: string;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
  statsInterval?: number;
}

export function registerExport(program: Command, io: CliIO): void {
  defineExport(program).action(async (flags: ExportFlags) => {
    const { runLongCommand } = await import('../long-run.js');
    // With --out -, stdout carries the zip alone: every line the run prints goes to stderr.
    const runIo = flags.out === '-' ? { ...io, stdout: io.stderr } : io;
    await runLongCommand(runIo, flags, exportRun(io, flags));
  });
}

/** The command, its flags and its help. */
function defineExport(program: Command): Command {
  const command = addRunLimitOptions(
    addServiceOptions(
      program
        .command('export')
        .description('export everything the API key can read into one zip')
        .requiredOption('-o, --out <file.zip>', 'the archive to write (and FILE.zip.sha256 beside it); - for stdout'),
    ),
  )
    .option(
      '--work-dir <folder>',
      'with --out -: where the archive is built and a run resumes (default $XDG_CACHE_HOME/rabbit-export/stdout)',
    )
    .option('-f, --force', 'replace an existing archive at --out')
    .option('--json', 'print one JSON summary line on stdout (on stderr with --out -)')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--stats-interval <duration>', STATS_INTERVAL_HELP, parseStatsInterval)
    .option('--since <prev.zip>', SELECTION_HELP.since)
    .option('--prototype <id>', SELECTION_HELP.prototype, collectPrototype)
    .option('--formats <list>', SELECTION_HELP.formats, parseFormats);
  return addMonitorOptions(command).addHelpText(
    'after',
    `
Examples:
  rabbit-export export --out team.zip       # the key from RABBIT_API_KEY
  rabbit-export export --out team.zip --api-key-file ~/.rabbit-key \\
    --concurrency 4
  rabbit-export export --out nightly.zip --json --quiet   # cron: one line
  rabbit-export export --out today.zip --since yesterday.zip   # only changes
  rabbit-export export --out two.zip --prototype 3 --prototype 17 \\
    --formats json
  # progress records every 5 minutes, then the summary:
  rabbit-export export --out big.zip --json --stats-interval 5m
  # encrypted, straight to remote storage:
  rabbit-export export --out - | age -r age1... \\
    | rclone rcat remote:rabbit/team.zip.age

With --out - the zip goes to stdout once it is finished and has passed verify;
everything else (progress, messages, the --json summary) goes to stderr. A
reader that stops early is exit 1.`,
  );
}

/** Where each key was written, to name a refused one by its line rather than show it; read when the run loads. */
interface KeyPlaces {
  places: string[];
}

/** What an export is to the runner of long commands: how to start it, and how its result reads. */
function exportRun(io: CliIO, flags: ExportFlags): LongCommand<ExportRun, ExportSummary> {
  const toStdout = flags.out === '-';
  const keys: KeyPlaces = { places: [] };
  return {
    name: 'export',
    load: () => loadExport(io, flags, keys),
    interrupted: () =>
      `interrupted; nothing was written to ${toStdout ? 'stdout' : resolve(flags.out)}. ${resumeHint(flags)}`,
    complete: (result) => result.complete,
    metricsLabel: () => ({ name: 'out', value: toStdout ? '-' : resolve(flags.out) }),
    summary: (result, times) => exportSummary(result, times, keys.places),
    describe: describeExport,
    warnings: (result) => zipNameNote(result.out) + failureReport(flags, result, keys.places),
  };
}

/** The core, loaded, once the flags and --out are checked and the keys' places read. */
async function loadExport(
  io: CliIO,
  flags: ExportFlags,
  keys: KeyPlaces,
): Promise<(parts: RunParts) => Promise<ExportRun>> {
  const toStdout = flags.out === '-';
  refuseApiKeyFlag(flags);
  if (toStdout && io.stdout.isTTY)
    throw new RabbitError(
      'USAGE',
      '--out - writes the zip to stdout, which is a terminal here; pipe it on (| age ... | rclone rcat ...) or redirect it (> team.zip)',
    );
  if (!toStdout && flags.workDir !== undefined) throw new RabbitError('USAGE', '--work-dir is for --out - only');
  const [{ readKeySources }, { checkOutputFile }, { isResumableArchive }] = await Promise.all([
    import('../keys.js'),
    import('../output-path.js'),
    import('../../storage/work-dir.js'),
  ]);
  // The archive a run left when it gave up on an outage is the one file the same command
  // may replace without --force: that is how it resumes.
  if (!toStdout) {
    const force = (flags.force ?? false) || (await isResumableArchive(flags.out));
    await checkOutputFile(flags.out, { flag: '--out', force });
  }
  keys.places = (await readKeySources(flags.apiKeyFile, io.env)).map((source) => source.where);
  const options = ({ service, signal, onEvent }: RunParts) => ({
    ...service,
    signal,
    onEvent,
    ...selectionOf(flags),
    ...runLimitsOf(flags),
  });
  if (!toStdout) {
    const { exportWithSidecar } = await import('../../export/checksummed-export.js');
    return (parts): Promise<ExportRun> =>
      exportWithSidecar({ out: flags.out, force: flags.force ?? false, ...options(parts) });
  }
  // Only --out - verifies before sending: the zip reader and manifest parser load for it alone.
  const [{ exportStaged, discardStaged }, { defaultWorkDir, sendArchive }] = await Promise.all([
    import('../../export/staged-export.js'),
    import('../stdout-archive.js'),
  ]);
  return async (parts): Promise<ExportRun> => {
    const staged = await exportStaged({ ...options(parts), workDir: flags.workDir ?? defaultWorkDir(io.env) });
    try {
      const sent = await sendArchive(staged.handle, io.stdout);
      return { ...staged.result, out: '-', sha256: sent.sha256 };
    } finally {
      await staged.handle.close();
      await discardStaged(staged.path);
    }
  };
}

type ExportSummary = ReturnType<typeof exportSummary>;

/** The --json summary's fields, in the order they are printed. */
function exportSummary(result: ExportRun, times: RunTimes, keyPlaces: readonly string[]) {
  return {
    out: result.out,
    sha256: result.sha256,
    complete: result.complete,
    prototypes: result.prototypes.total,
    ...result.left,
    files: result.stats.files,
    bytes: result.archiveBytes,
    storedBytes: result.stats.bytes,
    wireBytes: result.wireBytes,
    requests: result.stats.requests,
    retries: result.stats.retries,
    errors: result.errorCount,
    deadlineReached: result.deadlineReached,
    outages: outageSummary(result.outages),
    ...(result.keysRefused
      ? {
          keysRefused: result.keysRefused.map((refusal) => ({
            key: keyPlace(keyPlaces, refusal.keyNumber),
            since: new Date(refusal.since).toISOString(),
            request: refusal.request,
            status: refusal.status,
          })),
        }
      : {}),
    ...times,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

/** The report on stdout. */
function describeExport(result: ExportRun, summary: ExportSummary, timeLine: string): string {
  return (
    `${result.complete ? 'complete' : 'INCOMPLETE'}: ${summary.prototypes} prototypes, ${summary.files} files, ` +
    `${mib(summary.bytes)} in ${seconds(summary.durationMs)} (${summary.requests} requests, ${summary.retries} retries)\n` +
    `bodies: ${bodiesText(summary.storedBytes, summary.wireBytes)}\n` +
    `archive: ${result.out === '-' ? 'stdout' : printable(result.out)}\n` +
    `sha256: ${result.sha256}\n` +
    outageDescription(result.outages) +
    (result.notOffered ?? [])
      .map((n) => `not offered by the service (HTTP ${n.status}, not an error): ${n.count} ${n.kind} page views\n`)
      .join('') +
    `time: ${timeLine}\n`
  );
}

/** An export's result with the sha256 of the archive file (its sidecar's, or what went to stdout). */
type ExportRun = ChecksummedResult;

function failureReport(flags: ExportFlags, result: ExportResult, keyPlaces: readonly string[]): string {
  let text = '';
  if (result.deadlineReached)
    text += 'stopped fetching at --max-duration; the archive holds what was fetched until then\n';
  if (result.outages.gaveUp) {
    // The bodies fetched so far were kept beside the archive: the same command replaces it and reuses them.
    text +=
      `the service stayed away longer than --outage-patience; the archive holds what was fetched until then ` +
      `(${result.errorCount} ${result.errorCount === 1 ? 'entry' : 'entries'} in its "errors" name what is missing).\n` +
      `${resumeHint(flags)}\n`;
    return text;
  }
  if (result.keysRefused) {
    // Revoked mid-run: nothing more went out with the key; its bodies so far are kept for the rerun.
    for (const refusal of result.keysRefused)
      text +=
        `the service refused the API key on ${keyPlace(keyPlaces, refusal.keyNumber)} from ${clockTime(refusal.since)} on ` +
        `(request ${refusal.request} of this run, HTTP ${refusal.status}); nothing more was sent with it
`;
    text +=
      `the archive holds what was fetched until then (${result.errorCount} ${result.errorCount === 1 ? 'entry' : 'entries'} in its "errors" name what is missing).
` +
      `Fix or replace the key, then run the same command again to resume: ${exportCommand(flags)}
`;
    return text;
  }
  if (!result.complete) {
    // Stopped at --max-duration: what it left undone is the next run's work, not a failure.
    const left = result.deadlineReached ? result.left : undefined;
    if (left) text += leftText(flags, result);
    const failures = left ? result.errorCount - left.prototypesLeft - left.requestsCutOff : result.errorCount;
    const shown = left ? result.errors.filter((error) => error.code !== 'DEADLINE') : result.errors;
    if (failures === 0) return text;
    text += `${plural(failures, 'resource')} could not be archived:\n`;
    for (const error of shown)
      text += `  ${error.source}${error.status ? ` (HTTP ${error.status})` : ''}: ${printable(error.message)}\n`;
    if (failures > shown.length) text += `  ... and ${failures - shown.length} more (see manifest.json "errors")\n`;
    // A refused key is refused again on the next run: fetching "what is missing" cannot help
    // until the key is fixed, so that comes first.
    const refused = refusedKeyPlaces(result, keyPlaces);
    for (const place of refused) text += `the API key on ${place} was refused: fix or remove it\n`;
    // --since the incomplete archive itself: what it holds is copied (verified), only the rest is fetched.
    if (result.out !== '-' && !left)
      text +=
        refused.length > 0
          ? `then fetch only what is missing: ${exportCommand(flags, result.out)}\n`
          : `to fetch only what is missing: ${exportCommand(flags, result.out)}\n`;
  }
  return text;
}

/**
 * "3 of 5 prototypes complete; 631 requests not started (2 prototypes)": a run stopped at
 * --max-duration did the smallest prototypes whole, and the same command --since its archive does
 * the next ones.
 */
function leftText(flags: ExportFlags, result: ExportResult): string {
  const { left } = result;
  let text =
    left.prototypesListed === 0
      ? 'the list of prototypes was not read'
      : `${left.prototypesComplete} of ${plural(left.prototypesListed, 'prototype')} complete`;
  if (left.requestsNotStarted > 0)
    text += `; ${plural(left.requestsNotStarted, 'request')} not started (${plural(left.prototypesLeft, 'prototype')})`;
  if (left.requestsCutOff > 0) text += `; ${plural(left.requestsCutOff, 'request')} cut off`;
  if (result.out === '-') return `${text}, run the same command with --since this archive to go on\n`;
  return `${text}, run the same command with --since to go on:\n  ${exportCommand(flags, result.out)}\n`;
}

/** Where the refused keys were written; the crawl names a refused key by its number among the keys. */
function refusedKeyPlaces(result: ExportResult, keyPlaces: readonly string[]): string[] {
  const places = result.errors.flatMap((error) => {
    const number = error.code === 'KEY_REFUSED' ? /API key number (\d+)/.exec(error.message)?.[1] : undefined;
    return number === undefined ? [] : [keyPlace(keyPlaces, Number(number))];
  });
  return [...new Set(places)];
}

/** "line 2 of keys.txt" for key number 2, never the key itself. */
function keyPlace(keyPlaces: readonly string[], keyNumber: number): string {
  return keyPlaces[keyNumber - 1] ?? `API key number ${keyNumber}`;
}

function resumeHint(flags: ExportFlags): string {
  return `Run the same command again to resume: ${exportCommand(flags)}`;
}

function exportCommand(flags: ExportFlags, fillFrom?: string): string {
  const args = ['rabbit-export', 'export', '--out', flags.out, ...serviceArgs(flags)];
  if (flags.workDir !== undefined) args.push('--work-dir', flags.workDir);
  args.push(...selectionArgs(fillFrom === undefined ? flags : { ...flags, since: fillFrom }), ...runLimitArgs(flags));
  if (fillFrom !== undefined || flags.force) args.push('--force');
  // Quoted for a shell, and then printable: a name's control characters would drive the terminal.
  return printable(args.map(shellQuote).join(' '));
}

/** `--out team` writes a zip named `team`: said, so that no one wonders what the file is. */
function zipNameNote(out: string): string {
  return out === '-' || extname(out).toLowerCase() === '.zip'
    ? ''
    : `note: wrote a zip archive named ${printable(out)}, as --out said; its name has no .zip, which a file manager needs to open it\n`;
}
