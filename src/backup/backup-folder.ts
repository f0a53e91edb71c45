import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readSidecar, sidecarPath, SUMS_FILE, writeSumsFile } from '../archive/checksum-file.js';
import { readArchiveManifest } from '../archive/open-archive.js';
import { whyNotOwn } from '../core/private-files.js';
import { parseBackupName, timeOf } from './archive-names.js';
import { ownArchives, type IgnoredArchive } from './own-archives.js';
import { planRetention, type RetentionDecision, type RetentionPolicy } from './retention.js';

/**
 * The retention plan for the archives of ours in `dir`, newest first. Completeness comes from each
 * archive's manifest (`known` answers for an archive whose result is already at hand); one whose
 * manifest cannot be read counts as incomplete, so it never stands in for a whole backup. What
 * ownArchives passes over is in no plan: never counted, never removed.
 */
export async function planFolder(
  dir: string,
  policy: RetentionPolicy,
  known: ReadonlyMap<string, boolean> = new Map(),
  now: number = Date.now(),
): Promise<RetentionDecision[]> {
  return (await planOwnFolder(dir, policy, known, now)).plan;
}

/** planFolder, with the archives it passed over and why. */
export async function planOwnFolder(
  dir: string,
  policy: RetentionPolicy,
  known: ReadonlyMap<string, boolean>,
  now: number,
  /** An archive not written yet, planned as if it were there: tonight's, for --dry-run. */
  planned?: { name: string; complete: boolean },
): Promise<{ plan: RetentionDecision[]; ignored: IgnoredArchive[] }> {
  const own = await ownArchives(dir, await readdir(dir), now);
  const archives = planned ? [{ name: planned.name, time: now, complete: planned.complete }] : [];
  for (const archive of own.archives) {
    const complete =
      known.get(archive.name) ??
      (await readArchiveManifest(join(dir, archive.name)).then(
        (manifest) => manifest.complete,
        () => false,
      ));
    archives.push({ name: archive.name, time: timeOf(archive), complete });
  }
  return { plan: planRetention(archives, policy), ignored: own.ignored };
}

/** Deletes what the plan removes, each archive with its sidecar, and returns their names. */
export async function applyPlan(dir: string, plan: readonly RetentionDecision[]): Promise<string[]> {
  const removed: string[] = [];
  for (const decision of plan) {
    if (decision.keep) continue;
    await rm(join(dir, decision.name), { force: true });
    await rm(sidecarPath(join(dir, decision.name)), { force: true });
    removed.push(decision.name);
  }
  return removed;
}

/** The archive a backup's sidecar (`NAME.zip.sha256`) is of; undefined for any other name. */
function archiveOfSidecar(name: string): string | undefined {
  const archive = name.endsWith('.sha256') ? name.slice(0, -'.sha256'.length) : undefined;
  return archive !== undefined && parseBackupName(archive) ? archive : undefined;
}

/**
 * The sidecars in `names` whose archive is not among them (deleted by hand): rewriteSums removes
 * them, and `backup --dry-run` says so from the same list.
 */
export function orphanSidecars(names: readonly string[]): string[] {
  const present = new Set(names);
  return names.filter((name) => {
    const archive = archiveOfSidecar(name);
    return archive !== undefined && !present.has(archive);
  });
}

/**
 * Rewrites `SHA256SUMS` from the sidecars of the archives still there, so `sha256sum -c SHA256SUMS`
 * checks the whole folder after any rotation. A sidecar whose archive is gone (deleted by hand) is
 * removed with it, and named in the result; an archive without a sidecar (written before sidecars
 * existed) is left out.
 */
export async function rewriteSums(dir: string): Promise<{ orphanSidecars: string[] }> {
  const names = await readdir(dir);
  const orphans = orphanSidecars(names);
  for (const name of orphans) await rm(join(dir, name), { force: true });
  const gone = new Set(orphans);
  const sums = new Map<string, string>();
  for (const name of names) {
    const archive = archiveOfSidecar(name);
    if (archive === undefined || gone.has(name)) continue;
    // Only sidecars that are the user's own regular files: a FIFO would hang the read, and a
    // sidecar another user left would put their hash in SHA256SUMS.
    const stats = await lstat(join(dir, name)).catch(() => undefined);
    if (stats === undefined || whyNotOwn(stats, 'file') !== undefined) continue;
    const sha256 = await readSidecar(join(dir, archive));
    if (typeof sha256 === 'string') sums.set(archive, sha256);
  }
  await writeSumsFile(join(dir, SUMS_FILE), sums);
  return { orphanSidecars: orphans };
}
