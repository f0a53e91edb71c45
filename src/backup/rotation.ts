export const BACKUP_DEFAULTS = {
  /** Two weeks of nightly runs: the folder never grows without bound unless asked to. */
  keep: 14,
} as const;

/**
 * Which archives to delete so that `keep` remain: the newest `keep` by name, and in any case the
 * newest complete one. Without that exception a run of incomplete nights (the service half down
 * for a week) would rotate the last whole backup away.
 *
 * `archives` is newest first; `isComplete` is asked lazily, newest first, only until the newest
 * complete archive is found (each answer reads one manifest).
 */
export async function planPrune(
  archives: readonly string[],
  keep: number,
  isComplete: (name: string) => Promise<boolean>,
): Promise<{ keep: string[]; remove: string[] }> {
  if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError('keep must be a whole number of at least 1');
  if (archives.length <= keep) return { keep: [...archives], remove: [] };
  let newestComplete: string | undefined;
  for (const name of archives) {
    if (await isComplete(name)) {
      newestComplete = name;
      break;
    }
  }
  const kept = new Set(archives.slice(0, keep));
  if (newestComplete !== undefined) kept.add(newestComplete);
  return {
    keep: archives.filter((name) => kept.has(name)),
    remove: archives.filter((name) => !kept.has(name)),
  };
}
