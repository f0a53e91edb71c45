import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { RabbitError } from '../../core/errors.js';
import { runAction, withInterrupts, type CliIO } from '../run.js';
import { addServiceOptions, refuseApiKeyFlag, type ServiceFlags } from '../service-flags.js';
import { addRunLimitOptions, type RunLimitFlags } from '../run-limit-flags.js';
import { intOption } from '../options.js';
import { printable } from '../terminal-text.js';
import type { VerifyReport } from '../../verify/verify-archive.js';
import type { SidecarCheck } from '../../archive/checksum-file.js';

interface VerifyFlags extends ServiceFlags, RunLimitFlags {
  json?: boolean;
  quiet?: boolean;
  againstLive?: boolean;
  sample?: string;
  seed?: string;
  maxRequests?: number;
}

export function registerVerify(program: Command, io: CliIO): void {
  addRunLimitOptions(
    addServiceOptions(
      program
        .command('verify')
        .description('check an archive: zip structure and every manifest entry (present, size, sha256)')
        .argument('<file.zip>', 'the archive to check')
        .option(
          '--json',
          'print the report as one JSON line (with --against-live: a line per difference, then a summary)',
        )
        .option('-q, --quiet', 'no progress on stderr (the report is printed all the same)')
        .option(
          '--against-live',
          'compare the archive with the service: what changed, what is new, what is gone (exit 3 on drift)',
        )
        .option(
          '--sample <share>',
          'with --against-live: check this share (5%) or number (200) of resources; lists are always checked in full (default 100%)',
        )
        .option('--seed <n>', 'with --against-live: the seed that picks the sample (printed by every run)')
        .option(
          '--max-requests <n>',
          'with --against-live: send at most this many requests',
          intOption('--max-requests', 1, 1_000_000_000),
        ),
      // liveCheckOptionsOf reads it from the archive's manifest.
      'the one the archive was exported from',
    ),
    // A check writes nothing and resumes nothing: a stop reports what was compared (liveVerdict).
    {
      maxDuration:
        'with --against-live: stop sending requests after this long (e.g. 90s, 45m, 6h) and report what was compared by then',
      outagePatience:
        'with --against-live: how long to wait for a service that stopped answering before stopping the check (exit 1: not checked)',
    },
  )
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export verify team.zip && echo intact\n  rabbit-export verify team.zip --json\n' +
        '  rabbit-export verify team.zip --against-live --sample 5%\n' +
        '  rabbit-export verify team.zip --against-live --sample 5% --seed 1234 \\\n' +
        '    --max-requests 2000',
    )
    .action((file: string, flags: VerifyFlags, command: Command) =>
      runAction(io, flags.json ? 'verify' : false, async () => {
        if (flags.againstLive) return verifyAgainstLive(file, flags, io);
        refuseLiveFlags(command);
        return verifyFile(file, flags, io);
      }),
    );
}

/** Exit 0: every entry checks and the file matches its .sha256 (when it has one); 1 otherwise. */
async function verifyFile(file: string, flags: VerifyFlags, io: CliIO): Promise<number> {
  const { formatVerifyReport, verifyNextStep } = await import('../format-archive.js');
  const { sidecarPath } = await import('../../archive/checksum-file.js');
  const { recordLine } = await import('../json-records.js');
  const { report, sidecar } = await checkFile(file, flags, io);
  const sidecarOk = sidecar.status !== 'mismatch';
  const code = report.ok && sidecarOk ? EXIT.ok : EXIT.failed;
  if (flags.json) {
    const { manifest, ok: _entriesOk, stoppedBy: _stoppedBy, ...rest } = report;
    io.stdout.write(
      recordLine('verify', 'summary', {
        ok: code === EXIT.ok,
        exitCode: code,
        ...rest,
        complete: manifest?.complete ?? null,
        sidecar,
      }),
    );
  } else {
    const mismatch =
      sidecar.status === 'mismatch'
        ? { sidecar: sidecarPath(file), actual: sidecar.actual, expected: sidecar.expected }
        : undefined;
    io.stdout.write(`${formatVerifyReport(report, mismatch)}\n`);
    if (sidecar.status === 'ok') io.stdout.write(`matches ${printable(sidecarPath(file))}\n`);
    if (sidecar.status === 'malformed')
      io.stdout.write(`note: ${printable(sidecarPath(file))} is not a sha256sum line and was not used\n`);
    // Last, as a refusal's next step is: what to do about what the lines above found.
    const next = verifyNextStep(report, mismatch);
    if (next !== undefined) io.stdout.write(`next: ${printable(next)}\n`);
  }
  return code;
}

/** The entries checked, then the file against its sidecar, with their progress on stderr. */
async function checkFile(
  file: string,
  flags: VerifyFlags,
  io: CliIO,
): Promise<{ report: VerifyReport; sidecar: SidecarCheck }> {
  const { verifyArchive } = await import('../../verify/verify-archive.js');
  const { checkSidecar } = await import('../../archive/checksum-file.js');
  const { workProgress } = await import('../work-progress.js');
  const progress = await workProgress(io, flags, VERIFY_WORDS);
  try {
    const report = await verifyArchive(file, {
      onProgress: ({ checked, total }) => progress.set({ step: 'entries', done: checked, total }),
    });
    // FILE.sha256 beside the archive (export and backup write one): the file as a whole, as written.
    const sidecar = await checkSidecar(file, (done, total) => progress.set({ step: 'file', done, total }));
    return { report, sidecar };
  } finally {
    progress.stop();
  }
}

/** What verify's progress calls its steps: the entries read and hashed, then the whole file for its .sha256. */
const VERIFY_WORDS = {
  entries: { verb: 'checked', unit: 'entries' },
  file: { verb: 'hashed the whole file:', unit: 'bytes' },
  live: { verb: 'checked', unit: 'lists and resources' },
} as const;

/** Verify's own flags; every other one (the sample's, the service's, the run limits) is for --against-live. */
const FILE_FLAGS = new Set(['json', 'quiet', 'againstLive']);

/**
 * A flag of the live check without --against-live would be ignored silently: say so instead. Told
 * by where commander took its value from, so a flag given at its default (`--concurrency 8`)
 * counts as given. A key typed on the command line gets its own refusal (refuseApiKeyFlag).
 */
function refuseLiveFlags(command: Command): void {
  const given = command.options.filter((option) => {
    const name = option.attributeName();
    return !FILE_FLAGS.has(name) && command.getOptionValueSource(name) === 'cli';
  });
  if (given.some((option) => option.attributeName() === 'apiKey')) refuseApiKeyFlag({ apiKey: '' });
  const flag = given[0]?.long;
  if (flag !== undefined) throw new RabbitError('USAGE', `${flag} is for verify --against-live`);
}

/** Exit 0: everything checked matches; 3: drift; 1: the service did not let it be checked. */
async function verifyAgainstLive(file: string, flags: VerifyFlags, io: CliIO): Promise<number> {
  const [{ liveCheckOptionsOf }, { checkAgainstLive }, { liveVerdict }, { formatLiveCheck, liveCheckRecords }] =
    await Promise.all([
      import('../live-check-flags.js'),
      import('../../live-check/check-live.js'),
      import('../../live-check/live-report.js'),
      import('../format-live-check.js'),
    ]);
  const options = await liveCheckOptionsOf(file, flags, io.env);
  // Progress on stderr; with --json, stdout keeps to its records and stderr to what went wrong.
  const progress = await (await import('../work-progress.js')).workProgress(io, flags, VERIFY_WORDS);
  const report = await withInterrupts(io, (signal) =>
    checkAgainstLive({
      ...options,
      signal,
      onStart: (read) =>
        progress.follow(() => {
          const { checked, total } = read();
          return { step: 'live', done: checked, total };
        }),
    }),
  ).finally(() => progress.stop());
  const verdict = liveVerdict(report);
  const code = verdict === 'match' ? EXIT.ok : verdict === 'drift' ? EXIT.incomplete : EXIT.failed;
  if (flags.json) for (const line of liveCheckRecords(report, verdict, code)) io.stdout.write(line);
  else io.stdout.write(`${formatLiveCheck(report, verdict)}\n`);
  return code;
}
