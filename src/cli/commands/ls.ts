import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

export function registerLs(program: Command, io: CliIO): void {
  program
    .command('ls')
    .description('list the prototypes in an archive')
    .argument('<file.zip>', 'the archive to list')
    .option('--json', 'print a JSON record per prototype, then a summary record (docs/json.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export ls team.zip\n  rabbit-export ls team.zip --json | jq \'select(.type == "row")\'',
    )
    .action((file: string, flags: { json?: boolean }) =>
      runAction(io, flags.json ? 'ls' : false, async () => {
        const { formatListTable, terminalColumns } = await import('../format-archive.js');
        const { recordLine } = await import('../json-records.js');
        const { listArchive } = await import('../../verify/list-archive.js');
        const rows = await listArchive(file);
        if (!flags.json) {
          io.stdout.write(`${formatListTable(rows, terminalColumns(io.stdout, io.env))}\n`);
          return EXIT.ok;
        }
        // A record per prototype, then the count: `jq 'select(.type == "row")'` reads the rows.
        for (const row of rows) io.stdout.write(recordLine('ls', 'row', { ...row }));
        io.stdout.write(
          recordLine('ls', 'summary', { ok: true, exitCode: EXIT.ok, archive: file, prototypes: rows.length }),
        );
        return EXIT.ok;
      }),
    );
}
