import { Command, CommanderError } from 'commander';
import type { CliIO } from '../../src/cli/run.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one registered command in-process with captured output, as src/cli/main.ts would. */
export async function runCli(register: (program: Command, io: CliIO) => void, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const stream = (sink: string[]): NodeJS.WriteStream =>
    ({ isTTY: false, write: (chunk: unknown) => sink.push(String(chunk)) > 0 }) as unknown as NodeJS.WriteStream;
  const program = new Command('rabbit-export').exitOverride();
  register(program, { stdout: stream(out), stderr: stream(err), env });
  for (const command of program.commands) command.exitOverride().configureOutput({ writeErr: (s) => err.push(s), writeOut: (s) => out.push(s) });
  const saved = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await program.parseAsync(['node', 'rabbit-export', ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = 2;
  } finally {
    process.exitCode = saved;
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}
