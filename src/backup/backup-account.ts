import { access, constants, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { isProcessAlive } from '../core/process-alive.js';
import { exportAccount, type ExportOptions, type ExportResult } from '../export/export-account.js';
import { acquireLock } from '../storage/lock.js';
import { outputPaths } from '../storage/work-dir.js';
import { readArchiveManifest } from '../archive/open-archive.js';
import { backupArchives, nextBackupName, parseBackupName } from './archive-names.js';
import { planPrune } from './rotation.js';
import { isSameService } from '../core/service-url.js';

export interface BackupOptions extends Omit<ExportOptions, 'out' | 'since' | 'force' | 'now'> {
  dir: string;
  /** Archives to keep after this run (the newest complete one is kept in any case). */
  keep?: number;
  /** Clock for the archive's name; tests pass one to simulate nights. */
  now?: () => number;
}

export interface BackupResult {
  /** Path of the archive this run wrote. */
  out: string;
  /** Name of the archive used as --since, or null for a full export. */
  since: string | null;
  /** Why no archive was used as --since although there were some (another service's), else null. */
  sinceSkipped: string | null;
  /** Newer archives of ours that were passed over because their manifest could not be read. */
  unreadable: string[];
  export: ExportResult;
  kept: string[];
  pruned: string[];
}

import { BACKUP_DEFAULTS } from './rotation.js';

export { BACKUP_DEFAULTS };

export const BACKUP_LOCK = '.rabbit-backup.lock';

/**
 * One scheduled backup into `dir`: export with the newest readable archive there as --since,
 * into `DIR/<UTC stamp>.zip`, then delete our oldest archives beyond `keep`. All of it runs under a
 * lock file in `dir`, so two runs (a slow night overtaken by the next cron tick) never overlap:
 * the second fails with LOCKED and touches nothing. A lock left by a dead process is taken over.
 *
 * Choosing --since reads only manifests: every entry copied from it is checked against its
 * sha256 anyway, and a full verify each night would read the whole previous archive once more.
 */
export async function backupAccount(options: BackupOptions): Promise<BackupResult> {
  const { dir: given, keep = BACKUP_DEFAULTS.keep, now = Date.now, ...exportOptions } = options;
  if (!Number.isSafeInteger(keep) || keep < 1)
    throw new RabbitError('USAGE', '--keep takes a whole number of at least 1');
  const dir = resolve(given);
  await checkDir(dir);
  let lock;
  try {
    lock = await acquireLock(join(dir, BACKUP_LOCK), `the backup folder ${dir}`);
  } catch (error) {
    if (!isRabbitError(error, 'LOCKED')) throw error;
    throw new RabbitError('LOCKED', `another backup is running, so this one did nothing: ${error.message}`, {
      cause: error,
      ...(error.data ? { data: error.data } : {}),
    });
  }
  try {
    await removeAbandoned(dir);
    const names = await readdir(dir);
    const { since, unreadable, sinceSkipped } = await chooseSince(
      dir,
      backupArchives(names).map((archive) => archive.name),
      exportOptions.baseUrl,
    );
    const name = nextBackupName(now(), new Set(names));
    const out = join(dir, name);
    const result = await exportAccount({
      ...exportOptions,
      out,
      ...(since !== null ? { since: join(dir, since) } : {}),
    });

    const ours = backupArchives(await readdir(dir)).map((archive) => archive.name);
    const plan = await planPrune(ours, keep, async (archive) =>
      archive === name
        ? result.complete
        : readArchiveManifest(join(dir, archive)).then(
            (m) => m.complete,
            () => false,
          ),
    );
    // A clock set back could sort tonight's archive below older ones; it is never the one to go.
    const pruned = plan.remove.filter((archive) => archive !== name);
    for (const archive of pruned) await rm(join(dir, archive), { force: true });
    return {
      out,
      since,
      sinceSkipped,
      unreadable,
      export: result,
      kept: ours.filter((archive) => !pruned.includes(archive)),
      pruned,
    };
  } finally {
    await lock.release();
  }
}

async function checkDir(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new RabbitError('USAGE', `--dir ${dir} is not a folder; create it first`);
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `the backup folder ${dir} is not writable`, { cause: error });
  }
}

/**
 * The newest of our archives whose manifest reads and that was exported from this same service
 * (compared as normalized URLs, so an edited crontab URL for the same service still
 * reuses, while an archive of another service, whose ids mean other things, never is). With none,
 * the night makes a full export and says why rather than failing every night from now on.
 */
async function chooseSince(
  dir: string,
  archives: string[],
  baseUrl: string,
): Promise<{ since: string | null; unreadable: string[]; sinceSkipped: string | null }> {
  const unreadable: string[] = [];
  let sinceSkipped: string | null = null;
  for (const name of archives) {
    let source: string;
    try {
      source = (await readArchiveManifest(join(dir, name))).source.baseUrl;
    } catch {
      unreadable.push(name);
      continue;
    }
    if (isSameService(source, baseUrl)) return { since: name, unreadable, sinceSkipped: null };
    sinceSkipped ??= `${name} was exported from ${source}, not ${baseUrl}; nothing was reused, this is a full export`;
  }
  return { since: null, unreadable, sinceSkipped };
}

/**
 * What an interrupted or killed backup left for a resume that will never come (each night writes a
 * new name): its work directory and the temp file of a half-written zip. Only for names of ours,
 * and only when no live process holds them. Runs under the folder lock, so no other backup is
 * writing; the export's own lock inside a work directory guards against anything else.
 */
async function removeAbandoned(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    const work = /^\.(.+)\.rabbit-work$/.exec(entry)?.[1];
    if (work !== undefined && parseBackupName(work) && outputPaths(join(dir, work)).work === join(dir, entry)) {
      try {
        const held = await acquireLock(join(dir, entry, 'lock'), `the work directory ${entry}`);
        await held.release();
      } catch {
        continue;
      }
      await rm(join(dir, entry), { recursive: true, force: true });
      continue;
    }
    const temp = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/.exec(entry);
    if (temp && parseBackupName(temp[1] as string) && !isProcessAlive(Number(temp[2]))) {
      await rm(join(dir, entry), { force: true });
    }
  }
}
