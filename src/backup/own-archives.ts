import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { whyNotOwn } from '../core/private-files.js';
import { backupArchives, timeOf, type BackupName } from './archive-names.js';

/**
 * The archives in a backup folder that a run may read, choose as --since or count for retention:
 * names of ours that are the user's own regular files (no FIFO, which would hang the read; no
 * symlink; nothing another user left), stamped no later than a day ahead of the clock. A stamp
 * further ahead is no night this tool ran (a clock is not that wrong): taken as real, it would be
 * the next --since and push every real archive out of --keep-last.
 */
export interface IgnoredArchive {
  name: string;
  why: string;
}

export const FUTURE_SLACK_MS = 24 * 60 * 60 * 1000;

export async function ownArchives(
  dir: string,
  names: Iterable<string>,
  now: number,
): Promise<{ archives: BackupName[]; ignored: IgnoredArchive[] }> {
  const archives: BackupName[] = [];
  const ignored: IgnoredArchive[] = [];
  for (const archive of backupArchives(names)) {
    const stats = await lstat(join(dir, archive.name)).catch(() => undefined);
    // Gone since the folder was listed: nothing to read or remove.
    if (stats === undefined) continue;
    const why =
      whyNotOwn(stats, 'file') ?? (timeOf(archive) > now + FUTURE_SLACK_MS ? 'is stamped in the future' : undefined);
    if (why === undefined) archives.push(archive);
    else ignored.push({ name: archive.name, why });
  }
  return { archives, ignored };
}
