import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Where built executables are kept between runs, one folder per key; delete it to force a build. In
 * the checkout's own node_modules, beside the other caches of the tests (a reinstall clears it), not
 * under a name anyone on the machine could plant a folder at in the shared temporary directory.
 */
const cacheOf = (root: string): string => join(root, 'node_modules', '.cache', 'rabbit-export', 'sea');
/** Folders kept: a few worktrees or branches at once, each some 100 MB. */
const KEPT = 3;

/**
 * What `scripts/package.mjs` builds from: every file it or esbuild may read of ours (the sources,
 * the build scripts, the TypeScript settings, package.json with the version `--version` prints),
 * the dependencies it bundles as npm installed them (the lock, and npm's own record of the tree in
 * node_modules, which every install rewrites), and the Node it copies and prepares the blob with.
 * A dependency file edited by hand in node_modules is the one input this does not see.
 */
async function inputsKey(root: string): Promise<string> {
  const hash = createHash('sha256');
  const add = async (path: string): Promise<void> => {
    hash.update(`${relative(root, path)}\0`);
    hash.update(await readFile(path));
    hash.update('\0');
  };
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else await add(path);
    }
  };
  await walk(join(root, 'src'));
  await walk(join(root, 'scripts'));
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'node_modules/.package-lock.json'])
    await add(join(root, file));
  const node = await stat(process.execPath);
  hash.update(
    `${process.execPath}\0${process.version}\0${process.platform}-${process.arch}\0${node.size}\0${node.mtimeMs}`,
  );
  return hash.digest('hex').slice(0, 32);
}

/**
 * The folder `node scripts/package.mjs --out <folder>` wrote (the executable and its .sha256 line),
 * built by that very command when no earlier run built it from the same inputs, else that earlier
 * run's folder. The folder is shared: read it, never write to it.
 */
export async function builtExecutable(root: string): Promise<string> {
  const key = await inputsKey(root);
  const cache = cacheOf(root);
  const kept = join(cache, key);
  const now = new Date();
  try {
    // Marks it used, for prune(); a folder named by its key is a finished build (see the rename).
    await utimes(kept, now, now);
    return kept;
  } catch {
    // Not built from these inputs yet.
  }
  await mkdir(cache, { recursive: true });
  const staging = await mkdtemp(join(cache, '.build-'));
  try {
    const { stdout } = await execFileAsync(process.execPath, [join(root, 'scripts/package.mjs'), '--out', staging], {
      cwd: root,
    });
    // The last line names the executable; the steps before it may print their own lines.
    const printed = stdout.trim().split('\n').at(-1) ?? '';
    if (dirname(printed) !== staging) throw new Error(`package.mjs named no executable in ${staging}: ${stdout}`);
    await stat(printed);
    // Renamed whole once built: a run stopped halfway leaves a .build- folder, never a key's.
    await rename(staging, kept).catch(async (error: NodeJS.ErrnoException) => {
      // Another run built the same inputs first: theirs is as good.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      await rm(staging, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  await prune(cache, staging);
  return kept;
}

/** Keeps the KEPT builds used last, and no build left half done an hour ago by a run that was stopped. */
async function prune(cache: string, own: string): Promise<void> {
  const entries = await readdir(cache, { withFileTypes: true });
  const folders = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory() && join(cache, entry.name) !== own)
      .map(async (entry) => {
        const path = join(cache, entry.name);
        // Another run may prune at the same time.
        const used = (await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now();
        return { path, staging: entry.name.startsWith('.'), used };
      }),
  );
  const builds = folders.filter((folder) => !folder.staging).sort((a, b) => b.used - a.used);
  const stale = folders.filter((folder) => folder.staging && folder.used < Date.now() - 3_600_000);
  for (const { path } of [...builds.slice(KEPT), ...stale]) await rm(path, { recursive: true, force: true });
}
