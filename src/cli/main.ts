import { Command, CommanderError } from 'commander';
import { TOOL_VERSION } from '../core/version.js';
import { EXIT } from './exit-codes.js';
import { processIO } from './run.js';
import { registerDemo } from './commands/demo.js';
import { registerExport } from './commands/export.js';
import { registerLs } from './commands/ls.js';
import { registerServe } from './commands/serve.js';
import { registerVerify } from './commands/verify.js';
import { registerView } from './commands/view.js';
import { registerBackup } from './commands/backup.js';
import { registerDiff } from './commands/diff.js';
import { registerRestore } from './commands/restore.js';
import { registerConvert } from './commands/convert.js';

// `rabbit-export ls big.zip | head` closes the pipe early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const io = processIO();
const program = new Command('rabbit-export')
  .description('Rescue everything a team keeps in the Rabbit wireframing service into one verifiable zip.')
  .version(TOOL_VERSION, '-V, --version')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .addHelpText(
    'after',
    `
Examples:
  RABBIT_API_KEY=... rabbit-export export --out team.zip
  rabbit-export verify team.zip
  rabbit-export ls team.zip
  rabbit-export demo

Exit codes: 0 complete, 1 failed, 2 usage, 3 archive written but incomplete, 130 interrupted.`,
  );

for (const register of [registerExport, registerVerify, registerLs, registerServe, registerDemo, registerView, registerBackup, registerDiff, registerRestore, registerConvert]) register(program, io);
for (const command of program.commands) command.exitOverride();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version are not errors; everything else commander rejects is a usage error.
    const benign = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
    process.exitCode = benign ? EXIT.ok : EXIT.usage;
  } else {
    throw error;
  }
}
