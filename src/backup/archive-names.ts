/**
 * Names of the archives `backup` writes: the UTC time the run started, without colons (they are
 * not allowed in Windows file names and confuse scp), e.g. `2026-11-22T031500Z.zip`. A second run
 * within the same second gets `-2`, `-3`... Only names of exactly this shape are ever used as
 * --since or deleted: anything else in the folder is not ours.
 */
const NAME = /^(\d{4}-\d{2}-\d{2}T\d{6}Z)(?:-([1-9]\d{0,5}))?\.zip$/;

export interface BackupName {
  name: string;
  stamp: string;
  /** 1 for the plain name, n for `-n`. */
  seq: number;
}

export function parseBackupName(name: string): BackupName | undefined {
  const match = NAME.exec(name);
  if (!match) return undefined;
  const seq = match[2] === undefined ? 1 : Number(match[2]);
  // `-1` is never written: the plain name is the first; keep the mapping one-to-one.
  if (seq === 1 && match[2] !== undefined) return undefined;
  return { name, stamp: match[1] as string, seq };
}

export function stampOf(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '');
}

export function formatBackupName(stamp: string, seq: number): string {
  return seq === 1 ? `${stamp}.zip` : `${stamp}-${seq}.zip`;
}

/** Newest first. The fixed-width stamp sorts as text; the sequence number does not, so compare it as a number. */
export function newestFirst(a: BackupName, b: BackupName): number {
  if (a.stamp !== b.stamp) return a.stamp < b.stamp ? 1 : -1;
  return b.seq - a.seq;
}

/** Our archives among a folder's file names, newest first. */
export function backupArchives(names: Iterable<string>): BackupName[] {
  const ours: BackupName[] = [];
  for (const name of names) {
    const parsed = parseBackupName(name);
    if (parsed) ours.push(parsed);
  }
  return ours.sort(newestFirst);
}

/** The name for a run starting at `ms` that collides with none of `taken`. */
export function nextBackupName(ms: number, taken: ReadonlySet<string>): string {
  const stamp = stampOf(ms);
  for (let seq = 1; ; seq++) {
    const name = formatBackupName(stamp, seq);
    if (!taken.has(name)) return name;
  }
}

/** When the run that wrote an archive started, from its stamp, in ms since the epoch. */
export function timeOf(archive: BackupName): number {
  const [, y, mo, d, h, mi, s] = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(
    archive.stamp,
  ) as RegExpExecArray;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
}
