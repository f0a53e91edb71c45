import { mkdtempSync, rmSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Files that many test files make the same way (a deterministic export of the sample account, read
 * and never changed), made once per test worker and copied into each caller's folder: the files of
 * a worker share this module (isolate: false in vitest.config.ts), so the second file to ask gets a
 * copy instead of another export. Each caller still owns its copy and may damage it.
 */
const kept = new Map<string, Promise<{ dir: string; names: string[] }>>();
let root: string | undefined;
let made = 0;

/**
 * Copies of what `make` writes into the folder it is given (it returns the names it wrote), made
 * the first time `key` is asked for; the copies go into `into`, their paths returned in that order.
 */
export async function keptCopies(
  key: string,
  make: (dir: string) => Promise<string[]>,
  into: string,
): Promise<string[]> {
  let entry = kept.get(key);
  if (entry === undefined) {
    entry = (async () => {
      if (root === undefined) {
        const own = mkdtempSync(join(tmpdir(), 'rabbit-kept-'));
        process.once('exit', () => rmSync(own, { recursive: true, force: true }));
        root = own;
      }
      const dir = join(root, String(made++));
      await mkdir(dir);
      return { dir, names: await make(dir) };
    })();
    kept.set(key, entry);
    // A failed make is tried again by the next caller, not remembered.
    entry.catch(() => kept.delete(key));
  }
  const { dir, names } = await entry;
  return Promise.all(
    names.map(async (name) => {
      await copyFile(join(dir, name), join(into, name));
      return join(into, name);
    }),
  );
}
