import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Manifest } from '../../src/manifest/types.js';
import { python } from '../helpers/tools.js';

export { python };

/** An archive's manifest.json as Python's zipfile reads it: a reader we did not write. */
export async function manifestByPython(zip: string): Promise<Manifest> {
  const script = 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("manifest.json").decode())';
  const { stdout } = await promisify(execFile)(python(), ['-c', script, zip], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Manifest;
}
