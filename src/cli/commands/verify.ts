import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

export function registerVerify(program: Command, io: CliIO): void {
  program
    .command('verify')
    .description('check an archive: zip structure and every manifest entry (present, size, sha256)')
    .argument('<file.zip>', 'the archive to check')
    .option('--json', 'print the report as one JSON line')
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export verify team.zip && echo intact\n  rabbit-export verify team.zip --json',
    )
    .action((file: string, flags: { json?: boolean }) =>
      runAction(io, flags.json ?? false, async () => {
        const { formatVerifyReport } = await import('../format-archive.js');
        const { verifyArchive } = await import('../../verify/verify-archive.js');
        const { checkSidecar, sidecarPath } = await import('../../archive/checksum-file.js');
        const report = await verifyArchive(file);
        // FILE.sha256 beside the archive (export and backup write one): the file as a whole, as written.
        const sidecar = await checkSidecar(file);
        const sidecarOk = sidecar.status !== 'mismatch';
        if (flags.json) {
          const { manifest, ...rest } = report;
          io.stdout.write(
            `${JSON.stringify({ ...rest, ok: report.ok && sidecarOk, complete: manifest?.complete ?? null, sidecar })}\n`,
          );
        } else {
          const mismatch =
            sidecar.status === 'mismatch'
              ? { sidecar: sidecarPath(file), actual: sidecar.actual, expected: sidecar.expected }
              : undefined;
          io.stdout.write(`${formatVerifyReport(report, mismatch)}\n`);
          if (sidecar.status === 'ok') io.stdout.write(`matches ${sidecarPath(file)}\n`);
          if (sidecar.status === 'malformed')
            io.stdout.write(`note: ${sidecarPath(file)} is not a sha256sum line and was not used\n`);
        }
        return report.ok && sidecarOk ? EXIT.ok : EXIT.failed;
      }),
    );
}
