import type { Command } from 'commander';
import { printable } from '../format.js';
import { totalWrites } from '../../restore/report.js';
import type { RestoreReport } from '../../restore/report.js';
import type { RestoreEvent } from '../../restore/restore-prototype.js';
import { RESTORE_DEFAULTS } from '../../restore/restore-defaults.js';
import type { RabbitError } from '../../core/errors.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { runAction, secretHider, withInterrupts, type CliIO } from '../run.js';
import { addServiceOptions, DEFAULT_BASE_URL, type ServiceFlagDefaults, type ServiceFlags } from '../service-flags.js';
import { patienceOption } from '../run-limit-flags.js';
import { formatDuration } from '../../core/duration.js';
import { OUTAGE_DEFAULTS } from '../../client/outage-policy.js';

interface RestoreFlags extends ServiceFlags {
  prototype: string;
  page?: string[];
  layer?: string[];
  prune?: boolean;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
  journal?: string;
  outagePatience?: number;
}

/** Restore's own, as its help shows them: it reads JSON only, and an element at most 1 MiB whatever the cap. */
const RESTORE_FLAG_DEFAULTS: ServiceFlagDefaults = {
  ...RESTORE_DEFAULTS,
  maxSizeHelp:
    'size cap in MiB of each JSON answer of the service, as decoded, "json=N" (default 32; an element at most 1)',
};

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerRestore(program: Command, io: CliIO): void {
  addServiceOptions(
    program
      .command('restore')
      .description("put a prototype's elements back as an archive holds them (needs a read-write key)")
      .argument('<archive.zip>', 'the archive to restore from')
      .requiredOption('--prototype <id>', 'the prototype to restore'),
    DEFAULT_BASE_URL,
    RESTORE_FLAG_DEFAULTS,
  )
    .option('--page <id>', 'only this page (repeatable; default every page and layer)', collect)
    .option('--layer <id>', 'only this layer (repeatable)', collect)
    .option('--prune', 'also delete live elements the archive does not have')
    .option('--dry-run', 'print the plan and write nothing')
    .option('--json', 'print one JSON summary record at the end (docs/json.md; the plan goes to stderr)')
    .option(
      '-q, --quiet',
      'no progress, waits or notices on stderr, only errors (the plan, each write and a journal moved aside are printed all the same)',
    )
    .option('--journal <file>', 'the write journal (default .ARCHIVE.restore-ID.jsonl beside the archive)')
    .option(
      '--outage-patience <duration>',
      `how long to wait for a service that stopped answering before stopping (exit 1; run again to finish); 0: do not wait (default ${formatDuration(OUTAGE_DEFAULTS.patienceMs)})`,
      patienceOption,
    )
    .addHelpText(
      'after',
      `
Examples:
  rabbit-export restore nightly.zip --prototype 3 --dry-run
  rabbit-export restore nightly.zip --prototype 3 --page page0001 --prune
  rabbit-export restore nightly.zip --prototype 3 --json

Exit codes: 0 restored, 1 failed (nothing, or the reported part, written),
2 usage, 3 partly restored (the report says what not), 130 interrupted (run
again to finish).`,
    )
    .action((archive: string, flags: RestoreFlags) =>
      runAction(io, flags.json ? 'restore' : false, () => runRestore(archive, flags, io)),
    );
}

/** The restore the flags ask for: its plan and writes told as they come, then the outcome; the exit code. */
async function runRestore(archive: string, flags: RestoreFlags, io: CliIO): Promise<number> {
  const { restorePrototype } = await import('../../restore/restore-prototype.js');
  const { serviceOptionsOf } = await import('../service-options.js');
  const { recordLine } = await import('../json-records.js');
  // With the run's clock (a test's, which skips the waits), as every long run takes it.
  const service = { ...(await serviceOptionsOf(flags, io.env, (line) => io.stderr.write(line))), ...io.clock };
  const human = flags.json ? io.stderr : io.stdout;
  const told = await restoreEvents(io, human, flags.quiet ?? false);
  // Progress: the writes counted off restore's own events, on stderr (restore-progress.ts).
  const { workProgress } = await import('../work-progress.js');
  const { restoreProgress, RESTORE_WORDS } = await import('../restore-progress.js');
  const progress = await workProgress(io, flags, RESTORE_WORDS);
  const counted = restoreProgress(progress);
  const onEvent = (event: RestoreEvent): void => {
    counted(event);
    told(event);
  };
  const report = await withInterrupts(io, (signal) =>
    restorePrototype({
      ...service,
      archive,
      prototype: flags.prototype,
      ...(flags.page ? { pages: flags.page } : {}),
      ...(flags.layer ? { layers: flags.layer } : {}),
      prune: flags.prune ?? false,
      dryRun: flags.dryRun ?? false,
      // An empty --journal (a variable left unset) is refused as naming no file, not taken as none given.
      ...(flags.journal !== undefined ? { journal: flags.journal } : {}),
      ...(flags.outagePatience !== undefined ? { outagePatienceMs: flags.outagePatience } : {}),
      signal,
      onEvent,
    }),
  ).finally(() => progress.stop());
  if (report.fatal) {
    // The failure that stopped it, in the words every command uses for the network.
    const { explainNetworkFailure } = await import('../../client/network-failure.js');
    report.fatal = explainNetworkFailure(report.fatal) as RabbitError;
  }
  const code = restoreExitCode(report);
  const { formatOutcome } = await import('../format-restore.js');
  human.write(formatOutcome(report));
  if (report.fatal) await tellFatal(report.fatal, io);
  if (flags.json) io.stdout.write(recordLine('restore', 'summary', summaryOf(report, code, secretHider(io.env))));
  return code;
}

/**
 * The plan and each write on `human`; a pause for the service, a request's wait to be sent again
 * and a journal set aside on stderr, unless `quiet` (which still tells the journal, on `human`).
 */
async function restoreEvents(
  io: CliIO,
  human: NodeJS.WritableStream,
  quiet: boolean,
): Promise<(event: RestoreEvent) => void> {
  const { formatPlan, formatWrite } = await import('../format-restore.js');
  const { outageLine, waitLine, TOLD_WAIT_MS } = await import('../progress-line.js');
  return (event) => {
    if (event.type === 'plan') human.write(formatPlan(event.plan, event.report));
    else if (event.type === 'write') human.write(formatWrite(event.write, event.outcome, event.newId));
    // Another restore's journal is the record of its writes to a live service, which that restore
    // needs back under its name to resume: where it went is said even under --quiet, beside the
    // plan and the writes rather than on stderr.
    else if (quiet && event.type === 'journal-set-aside') human.write(setAsideLine(event.path));
    // --quiet leaves stderr to errors, as export's does: the lines below are the run's progress, and
    // an export under --quiet prints no outage lines.
    else if (quiet) return;
    // A pause is news on stderr; giving up is told once, as the fatal error with its next step.
    else if (event.type === 'outage' && event.state !== 'gave-up')
      io.stderr.write(`${outageLine(event, io.clock?.now?.() ?? Date.now())}\n`);
    // The writes go one at a time: a write that waits a minute for Retry-After holds the whole restore.
    else if (event.type === 'retry' && event.delayMs >= TOLD_WAIT_MS)
      io.stderr.write(`${waitLine({ ...event, source: printable(event.source) })}\n`);
    else if (event.type === 'journal-set-aside') io.stderr.write(setAsideLine(event.path));
  };
}

function setAsideLine(path: string): string {
  return `a journal of another restore was moved to ${printable(path)}\n`;
}

/** What stopped the restore, keys and URLs' queries left out, and the next step for it. */
async function tellFatal(fatal: RabbitError, io: CliIO): Promise<void> {
  const hide = secretHider(io.env);
  io.stderr.write(`rabbit-export: ${hide(printable(fatal.message))}\n`);
  const { nextStepFor } = await import('../error-guide.js');
  const next = nextStepFor(fatal);
  if (next !== undefined) io.stderr.write(`next: ${hide(printable(next))}\n`);
}

/** 0 all restored, 1 stopped (or nothing could be written), 3 partly restored. */
export function restoreExitCode(report: RestoreReport): number {
  if (report.fatal) return exitCodeFor(report.fatal);
  if (report.failed.length > 0 && totalWrites(report.done) === 0) return EXIT.failed;
  if (report.failed.length > 0 || report.skipped.length > 0) return EXIT.incomplete;
  return EXIT.ok;
}

function summaryOf(report: RestoreReport, code: number, hide: (text: string) => string): Record<string, unknown> {
  const counts = report.dryRun ? report.planned : report.done;
  return {
    ok: code === EXIT.ok,
    exitCode: code,
    dryRun: report.dryRun,
    prototype: report.prototype,
    create: counts.create,
    update: counts.update,
    delete: counts.delete,
    unchanged: report.unchanged,
    planned: report.planned,
    skipped: report.skipped,
    idMap: report.idMap,
    extraAttributes: report.extraAttributes,
    strays: report.strays,
    failed: report.failed,
    ...(report.journal ? { journal: report.journal } : {}),
    ...(report.fatal ? { error: { code: report.fatal.code, message: hide(printable(report.fatal.message)) } } : {}),
  };
}
