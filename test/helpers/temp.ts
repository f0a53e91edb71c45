import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A fresh temp directory, removed after the test (per-file.ts hooks removeTempDirs after each test). */
export async function tempDir(prefix = 'rabbit-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  while (made.length > 0) await rm(made.pop() as string, { recursive: true, force: true });
}
