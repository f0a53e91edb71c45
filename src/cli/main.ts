import { Command, CommanderError } from 'commander';
import { TOOL_VERSION } from '../core/version.js';
import { EXIT } from './exit-codes.js';
import { keepHeapNearLive } from './heap-growth.js';
import type { CliIO } from './run.js';

type Register = (program: Command, io: CliIO) => void;

keepHeapNearLive();

/**
 * Each command's definitions, loaded only when needed: `rabbit-export export ...` loads the
 * export command alone and `--version` none, so start-up does not pay for every command. A
 * command's module holds its flags and help; what its action runs is imported when it runs.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  export: async () => (await import('./commands/export.js')).registerExport,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
  ls: async () => (await import('./commands/ls.js')).registerLs,
  serve: async () => (await import('./commands/serve.js')).registerServe,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
  view: async () => (await import('./commands/view.js')).registerView,
  backup: async () => (await import('./commands/backup.js')).registerBackup,
  diff: async () => (await import('./commands/diff.js')).registerDiff,
  restore: async () => (await import('./commands/restore.js')).registerRestore,
  convert: async () => (await import('./commands/convert.js')).registerConvert,
  links: async () => (await import('./commands/links.js')).registerLinks,
  search: async () => (await import('./commands/search.js')).registerSearch,
  completion: async () => (await import('./commands/completion.js')).registerCompletion,
};

/** The commands this command line needs: the one it names, none for the version, else all (help, completion). */
function commandsFor(args: readonly string[]): string[] {
  const first = args[0];
  if (first !== undefined && first !== 'completion' && Object.hasOwn(COMMANDS, first)) return [first];
  if (args.length === 1 && (first === '-V' || first === '--version')) return [];
  return Object.keys(COMMANDS);
}

// `rabbit-export ls big.zip | head` closes the pipe early: that is the reader's choice, not an error.
// Any other failure to write (`> /dev/full`, a full disk behind a redirect) ends the run with exit
// 1 and, when it was stdout that failed, says so on stderr in a line rather than a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (stream === process.stdout) {
      const why = WRITE_FAILURES[error.code ?? ''] ?? error.message;
      process.stderr.write(`rabbit-export: cannot write to stdout: ${why}; what was written is not whole\n`);
    }
    process.exit(EXIT.failed);
  });
}

const WRITE_FAILURES: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EIO: 'an input/output error',
  EBADF: 'stdout is closed',
};

/**
 * Help is laid out for the terminal's width, else COLUMNS, else 80 (commander alone ignores
 * COLUMNS off a terminal). Its examples and notes are written to fit 80 columns.
 */
function helpWidth(stream: NodeJS.WriteStream): number {
  if (stream.isTTY && stream.columns > 0) return stream.columns;
  const fromEnv = Number(process.env['COLUMNS']);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80;
}

const program = new Command('rabbit-export')
  .configureOutput({
    getOutHelpWidth: () => helpWidth(process.stdout),
    getErrHelpWidth: () => helpWidth(process.stderr),
  })
  .description('Rescue everything a team keeps in the Rabbit wireframing service into one verifiable zip.')
  .version(TOOL_VERSION, '-V, --version')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .addHelpText(
    'after',
    `
Examples:
  rabbit-export export --out team.zip           # the key from RABBIT_API_KEY
  rabbit-export verify team.zip
  rabbit-export ls team.zip
  rabbit-export demo

Exit codes: 0 complete, 1 failed, 2 usage, 3 archive written but incomplete,
130 interrupted.`,
  );

/**
 * Registers what this command line needs and runs it. A function called without top-level await:
 * the single-file executable (scripts/package.mjs) runs this module bundled as CommonJS, which has none.
 */
async function main(): Promise<void> {
  const names = commandsFor(process.argv.slice(2));
  if (names.length > 0) {
    // Loaded side by side; registered in the table's order, which is the order of `--help`.
    const registers = await Promise.all(names.map((name) => (COMMANDS[name] as () => Promise<Register>)()));
    const io: CliIO = { stdout: process.stdout, stderr: process.stderr, env: process.env };
    for (const register of registers) register(program, io);
  }
  for (const command of program.commands) command.exitOverride();

  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander rejects is a usage error.
      const benign =
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help';
      process.exitCode = benign ? EXIT.ok : EXIT.usage;
      // A log that expects one JSON line a run (cron's `--json >> log`) gets one for a mistyped
      // flag too; commander has said what was wrong on stderr already.
      if (!benign && process.argv.includes('--json')) {
        const { failureRecord } = await import('./run.js');
        const { terminalJson } = await import('./terminal-text.js');
        const { recordCommandOf } = await import('./json-records.js');
        const message = error.message.replace(/^error: /, '');
        const record = failureRecord(recordCommandOf(process.argv.slice(2)), EXIT.usage, { code: 'USAGE', message });
        process.stdout.write(`${terminalJson(record)}\n`);
      }
    } else {
      throw error;
    }
  }
}

void main();
