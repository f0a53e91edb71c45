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
        const report = await verifyArchive(file);
        if (flags.json) {
          const { manifest, ...rest } = report;
          io.stdout.write(`${JSON.stringify({ ...rest, complete: manifest?.complete ?? null })}\n`);
        } else {
          io.stdout.write(`${formatVerifyReport(report)}\n`);
        }
        return report.ok ? EXIT.ok : EXIT.failed;
      }),
    );
}
