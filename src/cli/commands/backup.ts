import type { Command } from 'commander';
import { mib, plural, printable, seconds } from '../format.js';
import { BACKUP_DEFAULTS } from '../../backup/rotation.js';
import type { BackupResult } from '../../backup/backup-account.js';
import { collectPrototype, parseFormats, SELECTION_HELP, selectionOf, type SelectionFlags } from '../export-flags.js';
import { intOption } from '../options.js';
import { parseStatsInterval, STATS_INTERVAL_HELP } from '../progress-flags.js';
import type { CliIO } from '../run.js';
import { addServiceOptions, type ServiceFlags } from '../service-flags.js';
import { addRunLimitOptions, runLimitsOf, type RunLimitFlags } from '../run-limit-flags.js';

interface BackupFlags extends Omit<SelectionFlags, 'since'>, ServiceFlags, RunLimitFlags {
  dir: string;
  keep: number;
  json?: boolean;
  quiet?: boolean;
  statsInterval?: number;
}

export function registerBackup(program: Command, io: CliIO): void {
  addRunLimitOptions(
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
          'archives to keep (the newest complete one is always kept)',
          intOption('--keep', 1, 100_000),
          BACKUP_DEFAULTS.keep,
        ),
    ),
  )
    .option('--prototype <id>', SELECTION_HELP.prototype, collectPrototype)
    .option('--formats <list>', SELECTION_HELP.formats, parseFormats)
    .option('--json', 'print one JSON summary line on stdout (for logs)')
    .option('-q, --quiet', 'print nothing but errors')
    .option('--stats-interval <duration>', STATS_INTERVAL_HELP, parseStatsInterval)
    .addHelpText(
      'after',
      `
Runs never overlap: a second run while one is going says so (its pid, host and how long it has
been running, also in the --json line) and exits 1. Exit codes as for export. With --max-duration
a night that runs long stops fetching, writes what it has (exit 3) and the next night goes on.

Examples:
  rabbit-export backup --dir /var/backups/rabbit --keep 14 --api-key-file ~/.rabbit-keys
  15 3 * * * rabbit-export backup --dir ~/rabbit-backups --keep 14 --max-duration 3h --json --api-key-file ~/.rabbit-keys >> ~/rabbit-backup.log 2>&1`,
    )
    .action(async (flags: BackupFlags) => {
      const { runLongCommand } = await import('../long-run.js');
      await runLongCommand(io, flags, {
        async load() {
          const [{ backupAccount }, { prepareOutputFolder }] = await Promise.all([
            import('../../backup/backup-account.js'),
            import('../output-path.js'),
          ]);
          // Created like any output folder; it holds the nights before, so it may hold files.
          await prepareOutputFolder(flags.dir, { flag: '--dir', force: false, mayHoldFiles: true });
          return ({ service, signal, onEvent }) =>
            backupAccount({
              dir: flags.dir,
              keep: flags.keep,
              ...service,
              signal,
              onEvent,
              ...selectionOf(flags),
              ...runLimitsOf(flags),
            });
        },
        complete: (result: BackupResult) => result.export.complete,
        summary: (result: BackupResult, times) => ({
          out: result.out,
          since: result.since,
          sinceSkipped: result.sinceSkipped,
          deadlineReached: result.export.deadlineReached,
          complete: result.export.complete,
          prototypes: result.export.prototypes.total,
          reused: result.export.prototypes.reused,
          fetched: result.export.prototypes.fetched,
          files: result.export.stats.files,
          bytes: result.export.archiveBytes,
          requests: result.export.stats.requests,
          errors: result.export.errorCount,
          pruned: result.pruned,
          kept: result.kept.length,
          ...times,
        }),
        describe: (result, summary, timeLine) =>
          `${summary.complete ? 'complete' : 'INCOMPLETE'}: ${result.out}\n` +
          `  ${summary.prototypes} prototypes: ${summary.reused} unchanged, copied from ${result.since ?? '-'}; ${summary.fetched} fetched\n` +
          (result.sinceSkipped !== null ? `  full export: ${printable(result.sinceSkipped)}\n` : '') +
          (result.export.deadlineReached
            ? '  stopped fetching at --max-duration; the next backup fetches the rest\n'
            : '') +
          `  ${summary.requests} requests, ${mib(summary.bytes)} in ${seconds(summary.durationMs)}\n` +
          `  time: ${timeLine}\n` +
          `  ${plural(summary.kept, 'archive')} kept${summary.pruned.length > 0 ? `, removed ${summary.pruned.join(', ')}` : ''}\n`,
        warnings: (result, summary) =>
          result.unreadable
            .map((name) => `warning: ${printable(name)} could not be read and was not used as the previous backup\n`)
            .join('') +
          (summary.complete
            ? ''
            : `${plural(summary.errors, 'resource')} could not be archived; see "errors" in the manifest of ${result.out}\n`),
      });
    });
}
