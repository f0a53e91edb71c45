import { lstat, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isProcessAlive } from '../core/process-alive.js';
import { acquireLock } from '../storage/lock.js';
import { outputPaths } from '../storage/work-dir.js';
import { checkOwnDir, whyNotOwn } from '../core/private-files.js';
import { backupArchives, parseBackupName, type BackupName } from './archive-names.js';

/**
 * What an interrupted or killed backup left in the folder: its work directory (spool of bodies and
 * journal) and the temp file of a half-written zip. All of it is looked at under the folder lock,
 * so no other backup is writing; the export's own lock inside a work directory guards against
 * anything else.
 */

/** Work directories of our archive names that no live process holds, newest first. */
async function abandonedWorkDirs(dir: string): Promise<BackupName[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir)) {
    const name = /^\.(.+)\.rabbit-work$/.exec(entry)?.[1];
    if (name === undefined || !parseBackupName(name) || outputPaths(join(dir, name)).work !== join(dir, entry))
      continue;
    try {
      // Another user's folder (or one others may write) is never taken up, nor removed.
      await checkOwnDir(join(dir, entry), 'the work directory');
      const held = await acquireLock(join(dir, entry, 'lock'), `the work directory ${entry}`);
      await held.release();
    } catch {
      continue;
    }
    found.push(name);
  }
  return backupArchives(found);
}

/**
 * Hands the newest interrupted night's work to tonight's archive `name`: its work directory is
 * renamed to the one an export into `name` uses, so the export resumes from its journal (bodies
 * re-hashed before reuse, only unchanged prototypes reused) instead of fetching everything again.
 * Tonight's archive keeps tonight's name, so retention and --since see when its data was read.
 * Older leftovers, and temp files of dead processes, are removed. Returns the interrupted
 * night's archive name, or null when there was none.
 */
export async function takeOverInterrupted(dir: string, name: string): Promise<string | null> {
  const [newest, ...older] = await abandonedWorkDirs(dir);
  for (const stale of older) await rm(outputPaths(join(dir, stale.name)).work, { recursive: true, force: true });
  await removeDeadTemps(dir);
  if (newest === undefined) return null;
  const from = outputPaths(join(dir, newest.name)).work;
  const to = outputPaths(join(dir, name)).work;
  // Tonight can start in the second the interrupted night started in: its work is then already
  // where tonight's export looks for it (removing `to` would remove it).
  if (from !== to) {
    // A folder at tonight's name that is not among the abandoned ones is not ours to take (a link,
    // another user's, one others may write, one a live process holds): it is left alone, and the
    // interrupted work too, for the export to refuse it with its reason.
    if (await lstat(to).catch(() => undefined)) return null;
    await rename(from, to);
  }
  return newest.name;
}

/** Temp files (`.NAME.<pid>.<random>.tmp`) of our archives, sidecars and sums file whose process is gone. */
async function removeDeadTemps(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    const temp = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/.exec(entry);
    if (!temp) continue;
    const target = (temp[1] as string).replace(/\.sha256$/, '');
    if ((parseBackupName(target) || target === 'SHA256SUMS') && !isProcessAlive(Number(temp[2]))) {
      const stats = await lstat(join(dir, entry)).catch(() => undefined);
      if (stats !== undefined && whyNotOwn(stats, 'file') === undefined) await rm(join(dir, entry), { force: true });
    }
  }
}
