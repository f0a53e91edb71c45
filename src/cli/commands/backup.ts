import { resolve } from 'node:path';
import type { Command } from 'commander';
import { bodiesText, mib, plural, printable, seconds } from '../format.js';
import { clockTime, outageDescription, outageSummary } from '../progress-line.js';
import { BACKUP_DEFAULTS } from '../../backup/rotation.js';
import type { BackupResult } from '../../backup/backup-account.js';
import type { NightCheck } from '../../backup/check-sample.js';
import type { SampleSize } from '../../live-check/sample-plan.js';
import type { RetentionPolicy } from '../../backup/retention.js';
import { addMonitorOptions, type MonitorFlags } from '../monitor-flags.js';
import { runAction } from '../run.js';
import { collectPrototype, parseFormats, SELECTION_HELP, selectionOf, type SelectionFlags } from '../export-flags.js';
import { intOption } from '../options.js';
import { parseStatsInterval, STATS_INTERVAL_HELP } from '../progress-flags.js';
import type { CliIO } from '../run.js';
import { addServiceOptions, type ServiceFlags } from '../service-flags.js';
import { addRunLimitOptions, runLimitsOf, type RunLimitFlags } from '../run-limit-flags.js';
import { recordLine } from '../json-records.js';
import type { LongCommand, RunParts, RunTimes } from '../long-run.js';

interface BackupFlags extends Omit<SelectionFlags, 'since'>, ServiceFlags, RunLimitFlags, MonitorFlags {
  dir: string;
  keep?: number;
  keepLast?: number;
  keepDaily?: number;
  keepWeekly?: number;
  keepMonthly?: number;
  keepYearly?: number;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
  statsInterval?: number;
  checkSample?: string;
}

export function registerBackup(program: Command, io: CliIO): void {
  defineBackup(program).action(async (flags: BackupFlags) => {
    if (flags.dryRun) return dryRun(io, flags);
    const { runLongCommand } = await import('../long-run.js');
    await runLongCommand(io, flags, backupRun(io, flags));
  });
}

/** The command, its flags and its help. */
function defineBackup(program: Command): Command {
  const command = addRunLimitOptions(
    addServiceOptions(
      program
        .command('backup')
        .description(
          'one scheduled backup: export into DIR, copying what did not change from the newest archive there, then rotate',
        )
        .requiredOption(
          '-d, --dir <folder>',
          'folder of the backups; archives are named by UTC time, e.g. 2026-11-22T031500Z.zip',
        )
        .option(
          '-k, --keep <n>',
          `the same as --keep-last (default ${BACKUP_DEFAULTS.keep} when no --keep-* is given)`,
          intOption('--keep', 0, BACKUP_DEFAULTS.maxKeep),
        )
        .option('--keep-last <n>', 'keep the newest N complete archives', keepOption('last'))
        .option(
          '--keep-daily <n>',
          'keep the newest archive of each of the last N days that have one',
          keepOption('daily'),
        )
        .option('--keep-weekly <n>', 'the same for ISO weeks', keepOption('weekly'))
        .option('--keep-monthly <n>', 'the same for months', keepOption('monthly'))
        .option('--keep-yearly <n>', 'the same for years', keepOption('yearly'))
        .option(
          '--dry-run',
          "show which archives a backup now would keep and remove (tonight's included), and why; back up nothing",
        ),
    ),
  )
    .option('--prototype <id>', SELECTION_HELP.prototype, collectPrototype)
    .option('--formats <list>', SELECTION_HELP.formats, parseFormats)
    .option('--json', 'print one JSON summary record on stdout (for logs; docs/json.md)')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--stats-interval <duration>', STATS_INTERVAL_HELP, parseStatsInterval)
    .option(
      '--check-sample <share>',
      'then compare this share (5%) or number (200) of the archive with the service, as verify --against-live does',
    );
  return addMonitorOptions(command).addHelpText(
    'after',
    `
Runs never overlap: a second run while one is going says so (its pid, host
and how long it has been running, also in the --json line) and exits 1. Exit
codes as for export. With --max-duration a night that runs long stops
fetching, writes what it has (exit 3) and the next night goes on; an
interrupted or killed night is resumed by the next. Retention is restic's: the
--keep-* rules combine, times are UTC, the newest complete archive is always
kept and an incomplete one never fills a rule. Each archive gets
NAME.zip.sha256, and SHA256SUMS lists them all (sha256sum -c).

Examples:
  rabbit-export backup --dir /var/backups/rabbit --keep 14 \\
    --api-key-file ~/.rabbit-keys
  rabbit-export backup --dir /var/backups/rabbit --dry-run \\
    --keep-daily 7 --keep-weekly 5 --keep-monthly 12

A crontab entry, wrapped here to fit: cron needs it all on one line.
  15 3 * * * rabbit-export backup --dir ~/rabbit-backups --keep 14
    --max-duration 3h --json --api-key-file ~/.rabbit-keys
    >> ~/rabbit-backup.log 2>&1`,
  );
}

/** What a night is to the runner of long commands: how to start it, and how its result reads. */
function backupRun(io: CliIO, flags: BackupFlags): LongCommand<BackupResult, BackupSummary> {
  return {
    name: 'backup',
    load: () => loadBackup(io, flags),
    complete: (result) => result.export.complete && result.check?.failed !== true,
    metricsLabel: () => ({ name: 'dir', value: resolve(flags.dir) }),
    summary: backupSummary,
    describe: describeBackup,
    warnings: backupWarnings,
  };
}

/** The core, loaded; --dir and --check-sample checked before the run starts. */
async function loadBackup(io: CliIO, flags: BackupFlags): Promise<(parts: RunParts) => Promise<BackupResult>> {
  const [{ backupAccount }, { checkOutputFolder, outputFolder }] = await Promise.all([
    import('../../backup/backup-account.js'),
    import('../output-path.js'),
  ]);
  // Created like any output folder; it holds the nights before, so it may hold files. It is
  // checked now and made only once the run starts (the key has been read by then), and a
  // first night that fails takes back the folder it made, if it is still empty.
  const rule = { flag: '--dir', force: false, mayHoldFiles: true };
  const checkSample = await checkSampleOf(flags);
  await checkOutputFolder(flags.dir, rule);
  return async ({ service, signal, onEvent }) => {
    const folder = await outputFolder(flags.dir, rule);
    return backupAccount({
      dir: flags.dir,
      ...retentionFlags(flags),
      ...service,
      signal,
      onEvent,
      onBackupEvent: (event) => {
        if (!flags.quiet) io.stderr.write(`resuming the interrupted backup of ${whenOf(event.archive)}\n`);
      },
      ...selectionOf(flags),
      ...runLimitsOf(flags),
      ...(checkSample ? { checkSample } : {}),
    }).catch(async (error: unknown) => {
      await folder.undo();
      throw error;
    });
  };
}

type BackupSummary = ReturnType<typeof backupSummary>;

/** The --json summary's fields, in the order they are printed. */
function backupSummary(result: BackupResult, times: RunTimes) {
  return {
    out: result.out,
    sha256: result.sha256,
    resumed: result.resumed,
    resumedFiles: result.resumedFiles,
    since: result.since,
    sinceSkipped: result.sinceSkipped,
    ignored: result.ignored,
    deadlineReached: result.export.deadlineReached,
    complete: result.export.complete,
    prototypes: result.export.prototypes.total,
    reused: result.export.prototypes.reused,
    fetched: result.export.prototypes.fetched,
    files: result.export.stats.files,
    bytes: result.export.archiveBytes,
    requests: result.export.stats.requests,
    storedBytes: result.export.stats.bytes,
    wireBytes: result.export.wireBytes,
    errors: result.export.errorCount,
    outages: outageSummary(result.export.outages),
    pruned: result.pruned,
    orphanSidecars: result.orphanSidecars,
    kept: result.kept.length,
    ...(result.check ? { check: result.check } : {}),
    ...times,
  };
}

/** The report on stdout. */
function describeBackup(result: BackupResult, summary: BackupSummary, timeLine: string): string {
  return (
    `${summary.complete ? 'complete' : 'INCOMPLETE'}: ${printable(result.out)}\n` +
    (result.resumed !== null
      ? `  resumed the interrupted backup of ${whenOf(result.resumed)}: ${result.resumedFiles} files it had saved were reused unless changed\n`
      : '') +
    (result.since !== null
      ? `  ${summary.prototypes} prototypes: ${summary.reused} unchanged, copied from ${printable(result.since)}; ${summary.fetched} fetched\n`
      : `  ${plural(summary.prototypes, 'prototype')}, all fetched: a full export\n`) +
    (result.sinceSkipped !== null ? `  full export: ${printable(result.sinceSkipped)}\n` : '') +
    (result.export.deadlineReached ? '  stopped fetching at --max-duration; the next backup fetches the rest\n' : '') +
    `  ${summary.requests} requests, ${mib(summary.bytes)} in ${seconds(summary.durationMs)}\n` +
    (result.export.outages.count > 0 ? `  ${outageDescription(result.export.outages)}` : '') +
    `  bodies: ${bodiesText(summary.storedBytes, summary.wireBytes)}\n` +
    `  time: ${timeLine}\n` +
    `  sha256 ${result.sha256}\n` +
    (result.check ? checkLine(result.check) : '') +
    `  ${plural(summary.kept, 'archive')} kept${summary.pruned.length > 0 ? `, removed ${summary.pruned.map(printable).join(', ')}` : ''}\n` +
    (result.orphanSidecars.length > 0
      ? `  removed ${result.orphanSidecars.map(printable).join(', ')}: ${orphanWords(result.orphanSidecars.length)}\n`
      : '')
  );
}

/** Why a run removes a sidecar that no plan of archives names. */
function orphanWords(count: number): string {
  return count === 1 ? 'its archive is no longer in the folder' : 'their archives are no longer in the folder';
}

/** The names a night passes over, each with the reason, as warnings. */
function ignoredWarnings(ignored: BackupResult['ignored']): string {
  return ignored
    .map(
      (archive) =>
        `warning: ${printable(archive.name)} ${printable(archive.why)}: it was not read, counted or removed\n`,
    )
    .join('');
}

/** The lines on stderr: archives passed over, and why tonight's is incomplete. */
function backupWarnings(result: BackupResult, summary: BackupSummary): string {
  return (
    ignoredWarnings(result.ignored) +
    result.unreadable
      .map((name) => `warning: ${printable(name)} could not be read and was not used as the previous backup\n`)
      .join('') +
    (summary.complete ? '' : incompleteText(result))
  );
}

/**
 * Why tonight's archive is incomplete, in the words an operator acts on: work left by a stop (the
 * deadline, an outage past its patience, a key refused mid-run) is the next backup's, not a failure
 * of the resources it names; only what the service failed to give is counted as lost.
 */
function incompleteText(result: BackupResult): string {
  const run = result.export;
  if (run.outages.gaveUp)
    return `the service stayed away longer than --outage-patience; the next backup fetches what is missing from ${printable(result.out)}\n`;
  if (run.keysRefused && run.keysRefused.length > 0)
    return run.keysRefused
      .map(
        (refusal) =>
          `the service refused API key number ${refusal.keyNumber} from ${clockTime(refusal.since)} on (HTTP ${refusal.status}); nothing more was sent with it: fix or replace it, and the next backup fetches what is missing\n`,
      )
      .join('');
  const left = run.deadlineReached ? run.left : undefined;
  const failures = left ? run.errorCount - left.prototypesLeft - left.requestsCutOff : run.errorCount;
  return failures > 0
    ? `${plural(failures, 'resource')} could not be archived; see "errors" in the manifest of ${printable(result.out)}\n`
    : '';
}

/** --check-sample, read before anything is fetched so that a typo fails at once. */
async function checkSampleOf(flags: BackupFlags): Promise<SampleSize | undefined> {
  if (flags.checkSample === undefined) return undefined;
  const { parseSampleSize } = await import('../../live-check/sample-plan.js');
  return parseSampleSize(flags.checkSample, '--check-sample');
}

function checkLine(check: NightCheck): string {
  const found =
    check.differences === 0
      ? 'the archive matches the service'
      : `${plural(check.differences, 'difference')} from the service (${check.changed} changed, ${check.new} new, ${check.gone} gone)`;
  const verdict = check.failed
    ? `; FAILED: ${plural(check.unexplained, 'resource')} differ at an unchanged revision, so the archive does not hold what was fetched`
    : check.differences > 0
      ? ': edits made since the export'
      : '';
  return `  check of ${check.sample} (seed ${check.seed}, ${Math.floor(check.share * 1000) / 10}% of the archive): ${found}${verdict}\n`;
}

function keepOption(rule: string): (value: string) => number {
  return intOption(`--keep-${rule}`, 0, BACKUP_DEFAULTS.maxKeep);
}

function retentionFlags(flags: BackupFlags): { keep?: number; retention: RetentionPolicy } {
  const retention: RetentionPolicy = {
    ...(flags.keepLast !== undefined ? { last: flags.keepLast } : {}),
    ...(flags.keepDaily !== undefined ? { daily: flags.keepDaily } : {}),
    ...(flags.keepWeekly !== undefined ? { weekly: flags.keepWeekly } : {}),
    ...(flags.keepMonthly !== undefined ? { monthly: flags.keepMonthly } : {}),
    ...(flags.keepYearly !== undefined ? { yearly: flags.keepYearly } : {}),
  };
  return { ...(flags.keep !== undefined ? { keep: flags.keep } : {}), retention };
}

/** `2026-11-22T031500Z.zip` as `2026-11-22 03:15:00 UTC (2026-11-22T031500Z.zip)`. */
function whenOf(archive: string): string {
  const stamp = /^(\d{4}-\d{2}-\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(archive);
  return stamp ? `${stamp[1]} ${stamp[2]}:${stamp[3]}:${stamp[4]} UTC (${printable(archive)})` : printable(archive);
}

/** --dry-run: the retention plan, one line per archive (or one JSON line), and nothing done. */
function dryRun(io: CliIO, flags: BackupFlags): Promise<void> {
  return runAction(io, flags.json ? 'backup' : false, async () => {
    const [{ planBackupRetention }, { checkOutputFolder }] = await Promise.all([
      import('../../backup/backup-account.js'),
      import('../output-path.js'),
    ]);
    // The same answers about --dir as a real night, without creating it.
    const exists = await checkOutputFolder(flags.dir, { flag: '--dir', force: false, mayHoldFiles: true });
    const {
      archives: plan,
      orphanSidecars,
      ignored,
    } = await planBackupRetention({
      dir: flags.dir,
      ...retentionFlags(flags),
    });
    // What the night would warn of, said now: the same names are passed over then.
    if (!flags.quiet) io.stderr.write(ignoredWarnings(ignored));
    if (flags.json) {
      const removed = plan.filter((decision) => !decision.keep).length;
      io.stdout.write(
        recordLine('backup', 'summary', {
          ok: true,
          exitCode: 0,
          dryRun: true,
          dir: resolve(flags.dir),
          kept: plan.length - removed,
          removed,
          archives: plan,
          orphanSidecars,
        }),
      );
      return 0;
    }
    if (!exists) {
      io.stdout.write(
        `dry run: ${printable(resolve(flags.dir))} does not exist yet; the first backup creates it, and there is nothing to keep or remove\n`,
      );
      return 0;
    }
    const removed = plan.filter((decision) => !decision.keep).length;
    let text = `dry run: nothing is backed up or removed; what a backup into ${printable(resolve(flags.dir))} would keep and remove now, once its archive is written and complete:\n`;
    for (const decision of plan)
      text += `  ${decision.keep ? 'keep  ' : 'remove'} ${printable(decision.name)}  ${decision.reasons.join(', ')}\n`;
    for (const sidecar of orphanSidecars) text += `  remove ${printable(sidecar)}  ${orphanWords(1)}\n`;
    text += `${plan.length - removed} kept, ${removed} removed`;
    if (orphanSidecars.length > 0)
      text += `, and ${plural(orphanSidecars.length, 'sidecar')} of ${orphanSidecars.length === 1 ? 'an archive' : 'archives'} no longer there`;
    text += '\n';
    io.stdout.write(text);
    return 0;
  });
}
