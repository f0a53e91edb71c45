/**
 * Which archives a backup folder keeps, as restic's `forget` decides it: each `--keep-*` bucket
 * walks the archives newest first and keeps the newest archive of each of the last N
 * days, weeks or months that have one; the policies combine as a union, and each kept archive
 * says which rules kept it.
 *
 * Two safety rules come first, because these archives may be the only copy of the data:
 *  - the newest complete archive is always kept, whatever the policy;
 *  - an incomplete archive never fills a bucket (a week of half-down nights must not push the
 *    last whole backup out of "keep 7 daily"). It is kept while no complete archive is newer
 *    than it: the newest such one always (the next night continues from it), others while they
 *    are among the last `last` archives (the rule `--keep N` always had). Once a newer complete
 *    archive exists it goes.
 *
 * Time buckets are UTC, as the archive names are.
 */
export interface RetentionPolicy {
  /** The newest N complete archives. */
  last?: number;
  /** The newest complete archive of each of the last N days that have one. */
  daily?: number;
  weekly?: number;
  monthly?: number;
  yearly?: number;
}

export interface RetainedArchive {
  name: string;
  /** When the run started (from the name), in ms since the epoch. */
  time: number;
  complete: boolean;
}

export interface RetentionDecision {
  name: string;
  keep: boolean;
  /** Why it is kept (one per rule that kept it), or why it goes. */
  reasons: string[];
  /** The archive the run is about to write (in a --dry-run plan), not one in the folder yet. */
  tonight?: boolean;
}

type Bucket = 'daily' | 'weekly' | 'monthly' | 'yearly';

const BUCKETS: readonly Bucket[] = ['daily', 'weekly', 'monthly', 'yearly'];

/** The policy's rules that are set, checked; USAGE-style errors are the caller's to word. */
export function policyProblem(policy: RetentionPolicy): string | undefined {
  const set = Object.entries(policy).filter(([, n]) => n !== undefined);
  if (set.length === 0) return 'the retention policy keeps nothing; give at least one --keep-* of 1 or more';
  for (const [rule, n] of set) {
    if (!Number.isSafeInteger(n) || (n as number) < 0) return `--keep-${rule} takes a whole number of 0 or more`;
  }
  if (set.every(([, n]) => n === 0))
    return 'the retention policy keeps nothing; give at least one --keep-* of 1 or more';
  return undefined;
}

/**
 * The decision for every archive, in the order given (which must be newest first). Pure: the same
 * archives and policy always give the same plan, so `--dry-run` shows exactly what a run would do.
 */
export function planRetention(archives: readonly RetainedArchive[], policy: RetentionPolicy): RetentionDecision[] {
  const problem = policyProblem(policy);
  if (problem !== undefined) throw new RangeError(problem);
  const newestComplete = archives.findIndex((archive) => archive.complete);
  let lastLeft = policy.last ?? 0;
  const left = new Map<Bucket, number>(BUCKETS.map((bucket) => [bucket, policy[bucket] ?? 0]));
  const seen = new Map<Bucket, string>();

  return archives.map((archive, index): RetentionDecision => {
    const reasons: string[] = [];
    if (!archive.complete) {
      // Newer than every complete archive, it holds what no complete archive has yet.
      const newer = newestComplete === -1 || index < newestComplete;
      if (newer && index === 0) reasons.push('newest, incomplete');
      else if (newer && index < (policy.last ?? 0)) reasons.push(`incomplete, among the last ${policy.last}`);
      if (reasons.length > 0) return { name: archive.name, keep: true, reasons };
      const why = newer ? 'incomplete, not among the last --keep-last' : 'incomplete, a newer complete archive exists';
      return { name: archive.name, keep: false, reasons: [why] };
    }
    if (index === newestComplete) reasons.push('newest complete');
    if (lastLeft > 0) {
      lastLeft--;
      reasons.push(`last ${policy.last}`);
    }
    for (const bucket of BUCKETS) {
      const n = left.get(bucket) ?? 0;
      if (n === 0) continue;
      const key = bucketOf(bucket, archive.time);
      if (seen.get(bucket) === key) continue;
      seen.set(bucket, key);
      left.set(bucket, n - 1);
      reasons.push(`${bucket} ${key}`);
    }
    return reasons.length > 0
      ? { name: archive.name, keep: true, reasons }
      : { name: archive.name, keep: false, reasons: ['matches no --keep rule'] };
  });
}

/** The bucket an instant falls in: `2026-11-22`, `2026-W47` (ISO week), `2026-11`, `2026`. */
export function bucketOf(bucket: Bucket, ms: number): string {
  const iso = new Date(ms).toISOString();
  switch (bucket) {
    case 'daily':
      return iso.slice(0, 10);
    case 'monthly':
      return iso.slice(0, 7);
    case 'yearly':
      return iso.slice(0, 4);
    case 'weekly': {
      const [year, week] = isoWeek(ms);
      return `${year}-W${String(week).padStart(2, '0')}`;
    }
  }
}

/** ISO 8601 week: weeks start on Monday, week 1 holds the year's first Thursday. */
function isoWeek(ms: number): [number, number] {
  const date = new Date(ms);
  const day = date.getUTCDay() || 7;
  // The Thursday of this week decides the year the week belongs to.
  const thursday = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 4 - day);
  const year = new Date(thursday).getUTCFullYear();
  return [year, Math.floor((thursday - Date.UTC(year, 0, 1)) / 86_400_000 / 7) + 1];
}
