import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { Manifest } from '../../src/manifest/types.js';
import { python } from '../helpers/tools.js';

/** An archive's manifest.json as Python's zipfile reads it: a reader we did not write. */
export async function manifestByPython(zip: string): Promise<Manifest> {
  const script = 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("manifest.json").decode())';
  const { stdout } = await promisify(execFile)(python(), ['-c', script, zip], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Manifest;
}

/** Every file under a folder, by its path inside it. */
export async function filesIn(folder: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(folder, path), await readFile(path));
  }
  return files;
}

/** Extracts the whole zip into `into` with Python's zipfile: a reader we did not write. */
export async function extractByPython(zip: string, into: string): Promise<void> {
  const script = 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])';
  await promisify(execFile)(python(), ['-c', script, zip, into]);
}

/** Every entry of the zip as Python's zipfile extracts it into `into`, by entry name. */
export async function extractedByPython(zip: string, into: string): Promise<Map<string, Buffer>> {
  await extractByPython(zip, into);
  return filesIn(into);
}
