import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { Manifest } from '../../src/manifest/types.js';
import { hasTool, missingTool } from '../helpers/tools.js';

let interpreter: string | undefined;

/**
 * The interpreter `python3` on PATH names, asked once for the worker and run directly after: a
 * version manager's shim in its place (pyenv's is a bash script that runs pyenv first) costs
 * each start a tenth of a second of CPU and a third of one of the wall, more than most scripts here.
 */
export function python(): string {
  if (!hasTool('python3')) throw missingTool('python3');
  interpreter ??= execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  return interpreter;
}

/** An archive's manifest.json as Python's zipfile reads it: a reader we did not write. */
export async function manifestByPython(zip: string): Promise<Manifest> {
  const script = 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("manifest.json").decode())';
  const { stdout } = await promisify(execFile)(python(), ['-c', script, zip], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Manifest;
}
