import { access, constants, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { exportAccount, type ExportOptions, type ExportResult } from '../export/export-account.js';
import { acquireLock, type Lock } from '../storage/lock.js';
import { outputPaths } from '../storage/work-dir.js';
import { readArchiveManifest } from '../archive/open-archive.js';
import { sha256OfFile, writeSidecar } from '../archive/checksum-file.js';
import { nextBackupName } from './archive-names.js';
import { applyPlan, orphanSidecars, planOwnFolder, rewriteSums } from './backup-folder.js';
import { ownArchives, type IgnoredArchive } from './own-archives.js';
import { checkOwnDir } from '../core/private-files.js';
import { takeOverInterrupted } from './leftovers.js';
import { policyProblem, type RetentionDecision, type RetentionPolicy } from './retention.js';
import { isSameService } from '../api/service-url.js';
import type { SampleSize } from '../live-check/sample-plan.js';
import { checkNight, nightCheckOptions, type NightCheck } from './check-sample.js';

/** What a backup reports besides its export's events. */
export type BackupEvent =
  // Tonight's run goes on from where an interrupted one stopped (its journal and saved bodies).
  { type: 'resume'; archive: string };

export interface BackupOptions extends Omit<ExportOptions, 'out' | 'since' | 'force' | 'now'> {
  dir: string;
  /** The newest N archives to keep: `retention: { last: N }`, the rule `--keep` always had. */
  keep?: number;
  /** Which archives to keep after this run (restic's forget), with `keep` as its `last`; with neither, the last BACKUP_DEFAULTS.keep. */
  retention?: RetentionPolicy;
  onBackupEvent?: (event: BackupEvent) => void;
  /** `--check-sample`: compare this share of tonight's archive with the service once it is written (check-sample.ts). */
  checkSample?: SampleSize;
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
  /** Archive names in the folder that were neither read nor counted nor removed, and why (ownArchives). */
  ignored: IgnoredArchive[];
  /** The interrupted night this run resumed (its archive name, never written), or null. */
  resumed: string | null;
  /** Bodies the resumed night had saved (each re-hashed and reused while its prototype is unchanged). */
  resumedFiles: number;
  /** The archive's sha256, as in its `.sha256` sidecar and SHA256SUMS. */
  sha256: string;
  export: ExportResult;
  kept: string[];
  pruned: string[];
  /** Sidecars (`NAME.zip.sha256`) of archives no longer in the folder, removed with SHA256SUMS rewritten. */
  orphanSidecars: string[];
  /** Every archive's fate and why. */
  retention: RetentionDecision[];
  /** What `checkSample` found, when asked for. */
  check?: NightCheck;
}

import { BACKUP_DEFAULTS } from './rotation.js';

export { BACKUP_DEFAULTS };

export const BACKUP_LOCK = '.rabbit-backup.lock';

/**
 * One scheduled backup into `dir`: export with the newest readable archive there as --since,
 * into `DIR/<UTC stamp>.zip` with its `.sha256` sidecar, then apply the retention policy and
 * rewrite SHA256SUMS. An interrupted night's work is taken over. All of it runs under a
 * lock file in `dir`, so two runs (a slow night overtaken by the next cron tick) never overlap:
 * the second fails with LOCKED and touches nothing. A lock left by a dead process is taken over.
 *
 * Choosing --since reads only manifests: every entry copied from it is checked against its
 * sha256 anyway, and a full verify each night would read the whole previous archive once more.
 */
export async function backupAccount(options: BackupOptions): Promise<BackupResult> {
  const { dir: given, keep, retention, now = Date.now, onBackupEvent, checkSample, ...exportOptions } = options;
  const policy = retentionOf(keep, retention);
  const dir = resolve(given);
  await checkDir(dir);
  const lock = await lockFolder(dir);
  try {
    const names = await readdir(dir);
    const name = nextBackupName(now(), new Set(names));
    const resumed = await takeOverInterrupted(dir, name);
    if (resumed !== null) onBackupEvent?.({ type: 'resume', archive: resumed });
    const own = await ownArchives(dir, names, now());
    const { since, unreadable, sinceSkipped } = await chooseSince(
      dir,
      own.archives.map((archive) => archive.name),
      exportOptions.baseUrl,
    );
    const out = join(dir, name);
    const { result, resumedFiles } = await exportNight(dir, out, since, exportOptions);
    const sha256 = await sha256OfFile(out);
    await writeSidecar(out, sha256);
    const check = checkSample ? await checkNight(out, checkSample, nightCheckOptions(exportOptions)) : undefined;
    // An archive that does not hold what the night fetched never fills a rule.
    const rotation = await rotate(dir, policy, name, result.complete && check?.failed !== true, now());
    return {
      out,
      since,
      sinceSkipped,
      unreadable,
      ignored: rotation.ignored,
      resumed,
      resumedFiles,
      sha256,
      export: result,
      kept: rotation.kept,
      pruned: rotation.pruned,
      orphanSidecars: rotation.orphanSidecars,
      retention: rotation.retention,
      ...(check ? { check } : {}),
    };
  } finally {
    await lock.release();
  }
}

/** The folder's lock, or LOCKED saying that another backup is running. */
async function lockFolder(dir: string): Promise<Lock> {
  try {
    return await acquireLock(join(dir, BACKUP_LOCK), `the backup folder ${dir}`);
  } catch (error) {
    if (!isRabbitError(error, 'LOCKED')) throw error;
    throw new RabbitError('LOCKED', `another backup is running, so this one did nothing: ${error.message}`, {
      cause: error,
      ...(error.data ? { data: error.data } : {}),
    });
  }
}

/**
 * Tonight's export into `out`, with `since` (a name in `dir`) as --since; and how many bodies an
 * interrupted night had saved. Interrupted, it says where its work is kept for the next night.
 */
async function exportNight(
  dir: string,
  out: string,
  since: string | null,
  exportOptions: Omit<BackupOptions, 'dir' | 'keep' | 'retention' | 'now' | 'onBackupEvent' | 'checkSample'>,
): Promise<{ result: ExportResult; resumedFiles: number }> {
  let resumedFiles = 0;
  try {
    const result = await exportAccount({
      ...exportOptions,
      out,
      ...(since !== null ? { since: join(dir, since) } : {}),
      onEvent: (event) => {
        if (event.type === 'start') resumedFiles = event.resumed;
        exportOptions.onEvent?.(event);
      },
    });
    return { result, resumedFiles };
  } catch (error) {
    if (!isRabbitError(error, 'INTERRUPTED')) throw error;
    throw new RabbitError(
      'INTERRUPTED',
      `the backup was interrupted; what it fetched is kept in ${outputPaths(out).work} and the next backup into ${dir} resumes from it`,
      { cause: error, data: { workDir: outputPaths(out).work } },
    );
  }
}

/**
 * The retention policy applied once tonight's archive (`name`) is written, and SHA256SUMS
 * rewritten: what was kept and removed, and every archive's fate.
 */
async function rotate(
  dir: string,
  policy: RetentionPolicy,
  name: string,
  complete: boolean,
  at: number,
): Promise<Pick<BackupResult, 'ignored' | 'kept' | 'pruned' | 'orphanSidecars' | 'retention'>> {
  const { plan, ignored } = await planOwnFolder(dir, policy, new Map([[name, complete]]), at);
  // A clock set back could sort tonight's archive below older ones; it is never the one to go.
  const pruned = await applyPlan(
    dir,
    plan.filter((decision) => decision.name !== name),
  );
  const { orphanSidecars } = await rewriteSums(dir);
  return {
    ignored,
    orphanSidecars,
    kept: plan.filter((decision) => !pruned.includes(decision.name)).map((decision) => decision.name),
    pruned,
    retention: plan.map((decision) =>
      decision.name === name && !decision.keep ? { name, keep: true, reasons: ["tonight's archive"] } : decision,
    ),
  };
}

/** What `backup --dry-run` says a run now would do in the folder. */
export interface BackupPlan {
  /** Every archive's fate and why, tonight's included. */
  archives: RetentionDecision[];
  /** Sidecars of archives no longer in the folder, which the run removes as it rewrites SHA256SUMS. */
  orphanSidecars: string[];
  /** Names the run would pass over, and why (it warns of each). */
  ignored: IgnoredArchive[];
}

/**
 * What a run with this policy would keep and remove in `dir`, and why: `backup --dry-run`. Reads
 * manifests only; takes no lock, exports nothing and deletes nothing.
 */
export async function planBackupRetention(
  options: Pick<BackupOptions, 'dir' | 'keep' | 'retention' | 'now'>,
): Promise<BackupPlan> {
  const policy = retentionOf(options.keep, options.retention);
  const dir = resolve(options.dir);
  // A folder the first night will create holds nothing to keep or remove yet.
  if ((await stat(dir).catch(() => undefined)) === undefined && (await isFolder(dirname(dir))))
    return { archives: [], orphanSidecars: [], ignored: [] };
  await checkDir(dir);
  // Planned as the real run plans, after tonight's archive is written (complete, as a night that
  // goes well is): what it says goes is what that run removes.
  const at = (options.now ?? Date.now)();
  const names = await readdir(dir);
  const name = nextBackupName(at, new Set(names));
  const { plan, ignored } = await planOwnFolder(dir, policy, new Map(), at, { name, complete: true });
  const archives = plan.map((decision) =>
    decision.name === name
      ? { name, keep: true, tonight: true, reasons: ["tonight's archive", ...(decision.keep ? decision.reasons : [])] }
      : decision,
  );
  return { archives, orphanSidecars: orphanSidecars(names), ignored };
}

function retentionOf(keep: number | undefined, retention: RetentionPolicy | undefined): RetentionPolicy {
  if (keep !== undefined && retention?.last !== undefined && keep !== retention.last)
    throw new RabbitError('USAGE', '--keep is --keep-last; give one of them');
  const policy: RetentionPolicy = { ...retention, ...(keep !== undefined ? { last: keep } : {}) };
  const given = Object.values(policy).some((n) => n !== undefined);
  const problem = policyProblem(given ? policy : { last: BACKUP_DEFAULTS.keep });
  if (problem !== undefined) throw new RabbitError('USAGE', problem);
  return given ? policy : { last: BACKUP_DEFAULTS.keep };
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function checkDir(dir: string): Promise<void> {
  if (!(await isFolder(dir))) throw new RabbitError('USAGE', `--dir ${dir} is not a folder; create it first`);
  // Another user who may write to the folder could plant the next --since or make retention
  // delete the real archives: the folder must be the user's own and no one else's to write.
  await checkOwnDir(dir, 'the backup folder', { flag: '--dir' });
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
