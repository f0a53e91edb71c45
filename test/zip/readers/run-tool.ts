import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { missingTool, python, type Tool } from '../../helpers/tools.js';

export interface ToolResult {
  stdout: string;
  stderr: string;
  /** Bytes written to stdout, also when `countOnly` dropped them. */
  stdoutBytes: number;
}

/**
 * Runs an external reader. Rejects when the tool is not installed (naming its Debian package: a
 * missing reader fails the test, it never skips) and on a non-zero exit, with its stderr.
 * `stdinFile` is piped to the tool's stdin, as a stream: no seeking back to the central
 * directory is possible.
 */
export function tool(
  command: Tool,
  args: string[],
  options: { stdinFile?: string; cwd?: string; countOnly?: boolean } = {},
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    // python3 as the interpreter it names, not through a version manager's shim (helpers/tools.ts).
    const child = spawn(command === 'python3' ? python() : command, args, {
      cwd: options.cwd,
      stdio: [options.stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let stdoutBytes = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (!options.countOnly) out.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? missingTool(command) : error));
    if (options.stdinFile && child.stdin) {
      // A reader may stop early on an error; that shows in its exit code, not as EPIPE here.
      child.stdin.on('error', () => undefined);
      createReadStream(options.stdinFile).pipe(child.stdin);
    }
    child.on('close', (code) => {
      const result = {
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      };
      if (code === 0) resolve(result);
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited with ${code}: ${result.stderr}${result.stdout.slice(-2000)}`),
        );
    });
  });
}
