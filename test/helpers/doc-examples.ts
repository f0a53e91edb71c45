import { spawn } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { runCli } from './cli.js';
import { skippingClock } from './skipping-clock.js';

/**
 * The shell examples of a markdown page, per the docs convention: a fence whose info string is
 * exactly `sh` runs; `sh no-run` (installing, cloning, cron lines, servers that never stop) and
 * every other language do not. A block whose last line is `# exit N` is expected to end with
 * status N (the first command that fails ends the block, as under `set -e`); otherwise 0.
 */
export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  expectedExit: number;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;
const EXIT_MARKER = /^\s*#\s*exit\s+(\d+)\s*$/;

export function shellBlocks(markdown: string, file: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = markdown.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index] ?? '');
    if (!open) continue;
    const fence = open[2] as string;
    const info = (open[3] ?? '').trim();
    const body: string[] = [];
    let end = index + 1;
    for (; end < lines.length; end++) {
      const text = lines[end] ?? '';
      if (text.trim().startsWith(fence[0]!.repeat(fence.length)) && text.trim().replace(/[`~]/g, '') === '') break;
      body.push(text);
    }
    if (info === 'sh') {
      const last = [...body].reverse().find((text) => text.trim() !== '') ?? '';
      const marker = EXIT_MARKER.exec(last);
      blocks.push({
        file,
        line: index + 1,
        code: body.join('\n'),
        expectedExit: marker ? Number(marker[1]) : 0,
      });
    }
    index = end;
  }
  return blocks;
}

export interface BlockRun {
  exitCode: number | null;
  output: string;
  timedOut: boolean;
}

/**
 * How a block runs: each lone `rabbit-export` command by the CLI's own program in this process
 * (the words as bash would split them, in the block's folder, with the block's environment), the
 * other lines by bash, in the block's order; the first step that fails ends the block, as under
 * `set -e`. A spawned CLI pays Node's start and the loading of its modules for each command, most
 * of what a small export costs; the program the process would run is the same. A plain `> file`
 * (stdout, one word bash passes on unchanged) is done as bash does it: the file created or emptied
 * before the command runs, then given exactly the bytes the command wrote to stdout; `mkdir -p b &&
 * rabbit-export …` runs its plain first command in bash, then the CLI (see AND_THEN). Commands whose
 * process is the point (a pipe, any other redirect, `--out -`, anything bash must expand) stay in bash.
 */
export type BlockStep =
  | {
      kind: 'cli';
      args: string[];
      text: string;
      stdoutTo?: string;
      /** `first && rabbit-export …`: bash runs `first`, the command runs only if that succeeds. */
      first?: string;
    }
  | { kind: 'shell'; code: string };

/**
 * `rabbit-export` and words bash would pass on unchanged: no quote, expansion, glob, pipe or
 * separator; at most one redirect, `> word` of stdout to a file (a blank before `>`, so `2>` is not
 * one, and no `>>`, `>|` or `&>`); a trailing comment is dropped, as bash drops it.
 */
const LONE_COMMAND =
  /^\s*rabbit-export((?:[ \t]+[\p{L}\p{N}_./=%:,+@-]+)+)(?:[ \t]+>[ \t]*([\p{L}\p{N}_./=%:,+@-]+))?(?:[ \t]+#.*)?$/u;
/** Commands that run until stopped: only a process the harness started can be stopped at the timeout. */
const RUN_UNTIL_STOPPED = new Set(['serve', 'view']);
/**
 * A line that is not a command of its own (it continues onto the next, or opens or closes a
 * compound command or a here-document), that leaves a job running for later lines, or that may end
 * the script early: its block runs whole in bash.
 */
const JOINS_LINES =
  /\\$|[|&]\s*$|<<|^\s*(?:if|then|elif|else|fi|for|while|until|do|done|case|esac|select|function|exit|return|break|continue|[{}])(?:\s|$)/;
/**
 * A line that may change what later lines run with (folder, variables, options, functions): the
 * rest runs in bash.
 */
const CHANGES_STATE =
  /(?:^|[;&|]\s*)(?:(?:cd|pushd|popd|export|unset|set|shopt|source|\.|alias|umask|trap|exec|eval|declare|local|readonly|typeset|ulimit)(?:\s|$)|[A-Za-z_]\w*=|[A-Za-z_][\w-]*\s*\(\))/;

/**
 * `first && rabbit-export …` with `first` one plain command (no quote, expansion, redirect, pipe,
 * separator or subshell): bash runs it, the CLI in-process after it. When `first` fails, set -e
 * does not end the script (a failure left of `&&` never does): the command is skipped, the list's
 * status is `first`'s, and the next line runs; so a block that reads `$?` runs in bash.
 */
const AND_THEN = /^\s*([^\s;&|()`$<>#'"\\][^;&|()`$<>#'"\\]*?)\s*&&\s*(rabbit-export\s.*)$/;
const READS_STATUS = /\$\?|PIPESTATUS/;

/**
 * The words after `rabbit-export` of a line that may run in-process, and the file its stdout is
 * redirected to if it is; undefined when bash must run it.
 */
export function loneCommand(line: string): { args: string[]; stdoutTo?: string } | undefined {
  const match = LONE_COMMAND.exec(line);
  if (!match) return undefined;
  const args = (match[1] ?? '').trim().split(/[ \t]+/);
  if (RUN_UNTIL_STOPPED.has(args[0] ?? '') || args.includes('-')) return undefined;
  return match[2] === undefined ? { args } : { args, stdoutTo: match[2] };
}

/**
 * Whether a quote (', ", $'…', a backtick) or a parenthesis is left open at the line's end, which
 * carries it onto the next line. Read as bash reads it: a quote inside another is a character of
 * it, a backslash escapes outside single quotes, and a `#` starting a word begins a comment. What
 * it cannot read surely (a command substituted inside quotes) counts as open: the block runs in bash.
 */
export function quotesOpen(line: string): boolean {
  let quote: "'" | '"' | '`' | "$'" | undefined;
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quote === "'") {
      if (char === "'") quote = undefined;
    } else if (quote !== undefined) {
      // A command substituted inside quotes quotes afresh: too rare in the docs to read here.
      if (quote !== "$'" && (char === '`' || (char === '$' && line[i + 1] === '(')) && char !== quote) return true;
      if (quote === '`' && (char === "'" || char === '"')) return true;
      if (char === '\\') i++;
      else if (char === (quote === "$'" ? "'" : quote)) quote = undefined;
    } else if (char === '\\') i++;
    else if (char === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) break;
    else if (char === '$' && line[i + 1] === "'") {
      quote = "$'";
      i++;
    } else if (char === "'" || char === '"' || char === '`') quote = char;
    else if (char === '(') depth++;
    else if (char === ')') depth--;
  }
  return quote !== undefined || depth !== 0;
}

export function blockSteps(code: string): BlockStep[] {
  const lines = code.split('\n');
  if (lines.some((line) => JOINS_LINES.test(line) || quotesOpen(line))) return [{ kind: 'shell', code }];
  const steps: BlockStep[] = [];
  let shell: string[] = [];
  let stateChanged = false;
  const flush = (): void => {
    if (shell.some((line) => line.trim() !== '' && !line.trim().startsWith('#')))
      steps.push({ kind: 'shell', code: shell.join('\n') });
    shell = [];
  };
  const readsStatus = READS_STATUS.test(code);
  for (const line of lines) {
    let command: { args: string[]; stdoutTo?: string; first?: string } | undefined;
    if (!stateChanged) command = loneCommand(line);
    const andThen = stateChanged || readsStatus || command !== undefined ? null : AND_THEN.exec(line);
    if (andThen && !CHANGES_STATE.test(andThen[1] ?? '')) {
      const then = loneCommand(andThen[2] ?? '');
      if (then !== undefined) command = { ...then, first: (andThen[1] ?? '').trim() };
    }
    if (command === undefined) {
      shell.push(line);
      stateChanged ||= CHANGES_STATE.test(line);
      continue;
    }
    flush();
    steps.push({ kind: 'cli', ...command, text: line.trim() });
  }
  flush();
  return steps;
}

/** Runs one block's steps (see BlockStep) in `cwd`, with exactly `env`; bash with `set -e -o pipefail`. */
export async function runBlock(
  block: DocBlock,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<BlockRun> {
  let output = '';
  // The status of the last command, as bash would end the script with it.
  let status: number | null = 0;
  for (const step of blockSteps(block.code)) {
    if (step.kind === 'cli' && step.first !== undefined) {
      const first = await runShell(step.first, cwd, env, timeoutMs);
      output += first.output;
      if (first.timedOut) return { ...first, output };
      if (first.exitCode !== 0) {
        status = first.exitCode;
        continue;
      }
    }
    const run =
      step.kind === 'cli'
        ? await runInProcess(step.args, cwd, env, step.stdoutTo)
        : await runShell(step.code, cwd, env, timeoutMs);
    output += run.output;
    if (run.timedOut || run.exitCode !== 0) return { ...run, output };
    status = 0;
  }
  return { exitCode: status, output, timedOut: false };
}

/**
 * A command through the CLI's whole program (src/cli/program.ts), as main.ts runs it. What escapes
 * it ends a process with status 1 and the stack on stderr; so it does here. Its waits (a page's
 * --max-rps, a retry's backoff) are skipped: what the page shows is the command's result, not
 * how long it took.
 */
async function runInProcess(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  stdoutTo: string | undefined,
): Promise<BlockRun> {
  let file: FileHandle | undefined;
  try {
    if (stdoutTo !== undefined) {
      // As bash: the file is opened, created or emptied, before the command runs, and stays so if it fails.
      try {
        file = await open(resolvePath(cwd, stdoutTo), 'w');
      } catch (error) {
        return { exitCode: 1, output: `bash: ${stdoutTo}: ${(error as Error).message}\n`, timedOut: false };
      }
    }
    const run = await runCli(args, { register: 'all', cwd, env, clock: skippingClock() });
    if (file === undefined) return { exitCode: run.code, output: run.stdout + run.stderr, timedOut: false };
    // The in-process stdout keeps text: a string written is these bytes exactly (UTF-8, as Node's
    // stdout would encode it); bytes that were not UTF-8 came back as U+FFFD and cannot be restored.
    if (run.stdout.includes('\uFFFD'))
      return {
        exitCode: 1,
        output: `${run.stderr}the harness: this command's stdout is not text it can write to ${stdoutTo} byte for byte; run it in bash\n`,
        timedOut: false,
      };
    await file.writeFile(run.stdout, 'utf8');
    return { exitCode: run.code, output: run.stderr, timedOut: false };
  } catch (error) {
    return {
      exitCode: 1,
      output: error instanceof Error ? (error.stack ?? error.message) : String(error),
      timedOut: false,
    };
  } finally {
    await file?.close();
  }
}

function runShell(code: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<BlockRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      // The whole group: a server the block started must not outlive the test.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output, timedOut });
    });
  });
}

/** What a failed block shows: where it is, what it ran, and everything it printed. */
export function describeFailure(block: DocBlock, run: BlockRun): string {
  const status = run.timedOut ? 'did not finish (killed)' : `exited ${run.exitCode}, expected ${block.expectedExit}`;
  return `${block.file}:${block.line}: the block ${status}\n--- block ---\n${block.code}\n--- output ---\n${run.output}`;
}
