import { Command, CommanderError } from 'commander';
import { TOOL_VERSION } from '../core/version.js';
import { EXIT } from './exit-codes.js';
import type { CliIO } from './run.js';
import { nameUnknownOptionsOnly } from './unknown-option.js';

type Register = (program: Command, io: CliIO) => void;

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

/**
 * Help is laid out for the terminal's width, else COLUMNS, else 80 (commander alone ignores
 * COLUMNS off a terminal). Its examples and notes are written to fit 80 columns.
 */
function helpWidth(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): number {
  if (stream.isTTY && stream.columns > 0) return stream.columns;
  const fromEnv = Number(env['COLUMNS']);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80;
}

function createProgram(io: CliIO): Command {
  return new Command('rabbit-export')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout, io.env),
      getErrHelpWidth: () => helpWidth(io.stderr, io.env),
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
}

/**
 * The whole command line, as `rabbit-export` runs it: registers what `argv` (node's, with the
 * program's two first words) needs, runs it, and leaves the exit code in process.exitCode. Its
 * output goes to `io` alone, so a test can run it in-process; main.ts adds what belongs to the
 * process (the heap setting, what a failed write to stdout means).
 */
export async function runProgram(argv: readonly string[], io: CliIO): Promise<void> {
  const program = createProgram(io);
  const args = argv.slice(2);
  const names = commandsFor(args);
  if (names.length > 0) {
    // Loaded side by side; registered in the table's order, which is the order of `--help`.
    const registers = await Promise.all(names.map((name) => (COMMANDS[name] as () => Promise<Register>)()));
    for (const register of registers) register(program, io);
  }
  // Commander quotes what was typed (`--concurrency $KEY`, a key as the command): what it says of a
  // usage error is held here and written below with every key the process knows hidden, the hiding
  // loaded only then (a command line that parses loads none of it: start-up stays short).
  const said: string[] = [];
  // Every usage error throws (to the catch below) rather than exit; an unknown option is named without its value.
  for (const command of [program, ...program.commands]) {
    // Its error and the hint after it (written as help to stderr), in the order commander writes them.
    command.configureOutput({ outputError: (text) => void said.push(text), writeErr: (text) => void said.push(text) });
    nameUnknownOptionsOnly(command);
  }

  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander rejects is a usage error.
      const benign =
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help';
      process.exitCode = benign ? EXIT.ok : EXIT.usage;
      // Help asked for by a command line that named no command is written to stderr: it quotes nothing typed.
      if (benign) return void io.stderr.write(said.splice(0).join(''));
      const { failureRecord, secretHider } = await import('./run.js');
      const hide = secretHider(io.env);
      io.stderr.write(hide(said.splice(0).join('')));
      // A log that expects one JSON line a run (cron's `--json >> log`) gets one for a mistyped
      // flag too; commander has said what was wrong on stderr already.
      if (args.includes('--json')) {
        const { terminalJson } = await import('./terminal-text.js');
        const { recordCommandOf } = await import('./json-records.js');
        const message = hide(error.message.replace(/^error: /, ''));
        const record = failureRecord(recordCommandOf(args), EXIT.usage, { code: 'USAGE', message });
        io.stdout.write(`${terminalJson(record)}\n`);
      }
    } else {
      throw error;
    }
  }
}
