import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

export function registerLs(program: Command, io: CliIO): void {
  program
    .command('ls')
    .description('list the prototypes in an archive')
    .argument('<file.zip>', 'the archive to list')
    .option('--json', 'print the rows as JSON')
    .addHelpText('after', '\nExamples:\n  rabbit-export ls team.zip\n  rabbit-export ls team.zip --json | jq .')
    .action((file: string, flags: { json?: boolean }) =>
      runAction(io, flags.json ?? false, async () => {
        const { formatListTable, terminalColumns } = await import('../format-archive.js');
        const { terminalJson } = await import('../terminal-text.js');
        const { listArchive } = await import('../../verify/list-archive.js');
        const rows = await listArchive(file);
        io.stdout.write(
          flags.json ? `${terminalJson(rows)}\n` : `${formatListTable(rows, terminalColumns(io.stdout, io.env))}\n`,
        );
        return EXIT.ok;
      }),
    );
}
