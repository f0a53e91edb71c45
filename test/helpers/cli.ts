import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { runProgram } from '../../src/cli/program.js';
import type { CliIO, RunClock } from '../../src/cli/run.js';

export const BIN = fileURLToPath(new URL('../../bin/rabbit-export.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment the CLI sees (PATH is added for a spawned CLI). */
  env?: NodeJS.ProcessEnv;
  /**
   * The CLI's working folder. An in-process run changes the worker's for the run's length: vitest's
   * workers are processes of their own (the forks pool), and a file's tests run one at a time.
   */
  cwd?: string;
  /**
   * Run this one command in-process, as src/cli/main.ts would register it, instead of spawning the
   * built CLI: faster, and it needs no build. 'all': the whole command line in-process, as main.ts
   * runs it (src/cli/program.ts: the commands it needs, help and its width, usage errors).
   */
  register?: ((program: Command, io: CliIO) => void) | 'all';
  /** The clock an in-process run waits on (a skippingClock()), instead of the system's. */
  clock?: RunClock;
  /**
   * An in-process run's stderr is a terminal of this many columns (0: one that does not say, as
   * `script`'s pseudo terminal), not a log.
   */
  terminal?: { columns: number };
}

/** Starts the built CLI (npm test builds first) with a clean environment plus `env`. */
export function startCli(
  args: string[],
  { env = {}, cwd }: Omit<CliOptions, 'register'> = {},
): { child: ChildProcess; done: Promise<CliRun> } {
  if (!existsSync(BUILT))
    throw new Error('dist/ is missing: run `npm run build` (npm test does it) before the CLI tests');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** The one way tests run the CLI to its end: spawned, or in-process with `register`. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const { register, clock, terminal, ...spawnOptions } = options;
  if (register === undefined) {
    if (clock !== undefined || terminal !== undefined)
      throw new Error('runCli: a clock or a terminal needs an in-process CLI (register)');
    return startCli(args, spawnOptions).done;
  }
  return runInProcess(register, args, options.env ?? {}, clock, terminal, options.cwd);
}

async function runInProcess(
  register: NonNullable<CliOptions['register']>,
  args: string[],
  env: NodeJS.ProcessEnv,
  clock: RunClock | undefined,
  terminal: CliOptions['terminal'],
  cwd: string | undefined,
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const stream = (sink: string[], tty?: { columns: number }): NodeJS.WriteStream =>
    ({
      isTTY: tty !== undefined,
      ...tty,
      write: (chunk: unknown) => sink.push(String(chunk)) > 0,
    }) as unknown as NodeJS.WriteStream;
  const io: CliIO = { stdout: stream(out), stderr: stream(err, terminal), env, ...(clock ? { clock } : {}) };
  const argv = ['node', 'rabbit-export', ...args];
  const run = async (): Promise<void> => {
    if (register === 'all') return runProgram(argv, io);
    const program = new Command('rabbit-export').exitOverride();
    register(program, io);
    for (const command of program.commands)
      command.exitOverride().configureOutput({ writeErr: (s) => err.push(s), writeOut: (s) => out.push(s) });
    await program.parseAsync(argv);
  };
  const saved = process.exitCode;
  process.exitCode = undefined;
  const home = process.cwd();
  let code: number;
  try {
    if (cwd !== undefined) process.chdir(cwd);
    await run();
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = 2;
  } finally {
    process.exitCode = saved;
    process.chdir(home);
  }
  return { code, signal: null, stdout: out.join(''), stderr: err.join('') };
}
