import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

export function registerDiff(program: Command, io: CliIO): void {
  program
    .command('diff')
    .description(
      'what changed between two archives: prototypes added, removed and changed, and in each the items that changed',
    )
    .argument('<a.zip>', 'the older archive')
    .argument('<b.zip>', 'the newer archive')
    .option('--json', 'print the differences as one JSON summary record (docs/json.md)')
    .addHelpText(
      'after',
      '\nCompares manifests only (sha256 of every body), so it is quick on archives of\n' +
        'any size. Exit code 0 whether or not they differ.\n\nExamples:\n' +
        '  rabbit-export diff backups/2026-11-21T031500Z.zip \\\n' +
        '    backups/2026-11-22T031500Z.zip\n' +
        '  rabbit-export diff monday.zip tuesday.zip --json | jq .changed',
    )
    .action((a: string, b: string, flags: { json?: boolean }) =>
      runAction(io, flags.json ? 'diff' : false, async () => {
        const { diffArchives } = await import('../../diff/diff-archives.js');
        const { formatDiff } = await import('../format-diff.js');
        const { recordLine } = await import('../json-records.js');
        const diff = await diffArchives(a, b);
        io.stdout.write(
          flags.json
            ? recordLine('diff', 'summary', { ok: true, exitCode: EXIT.ok, ...diff })
            : `${formatDiff(diff)}\n`,
        );
        return EXIT.ok;
      }),
    );
}
