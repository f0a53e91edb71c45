import { spawn } from 'node:child_process';

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

/** Runs one block with bash (`set -e -o pipefail`) in `cwd`, with exactly `env`. */
export function runBlock(block: DocBlock, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<BlockRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block.code], {
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
