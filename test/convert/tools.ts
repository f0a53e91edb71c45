import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The outside tools that judge convert's and links' outputs (poppler, qpdf, librsvg, chromium,
 * nginx). A missing tool fails the test that needs it: it never quietly skips.
 */
export function requireTool(path: string, debianPackage: string): string {
  if (!existsSync(path)) throw new Error(`${path} is missing: apt-get install ${debianPackage}`);
  return path;
}

export function runTool(
  command: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({
        code: error ? (error.code as number) : 0,
        stdout: stdout.toString('utf8'),
        stderr: stderr.toString('utf8'),
        bytes: stdout,
      });
    });
  });
}

/** Like runTool, but a non-zero exit is a failure with what the tool said. */
export async function tool(command: string, args: readonly string[]): Promise<string> {
  const run = await runTool(command, args);
  if (run.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${run.code}: ${run.stderr}${run.stdout}`);
  return run.stdout;
}
