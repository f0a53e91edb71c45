import type { RenderingFormat, ResourceKind } from './resource-kinds.js';
import type { SampleSize } from './sample-plan.js';
import type { StopReason } from './live-client.js';

/**
 * One way the archive and the service differ:
 *   `changed` the resource is in both and its bodies differ (see compare-bodies.ts);
 *   `new`     the service lists it and the archived list did not;
 *   `gone`    the archive holds it and the service no longer lists or serves it (404).
 * A `list` differs only as `changed`: the same members, served otherwise (another order, other names).
 */
export type DifferenceStatus = 'changed' | 'new' | 'gone';
export type DifferenceKind = ResourceKind | 'list';

export interface Difference {
  status: DifferenceStatus;
  kind: DifferenceKind;
  /** Absent for the account's list of prototypes. */
  prototype?: string;
  /** The resource's id (a rendering's is its page's; a list's is what it lists). */
  id: string;
  /** The page or layer an element is on, or whose list it is. */
  parent?: string;
  format?: RenderingFormat;
  /** The API path, without the key. */
  source: string;
  /** The archive entry, for what the archive holds. */
  path?: string;
  /** The prototype's revision in the archive and on the service, where known. */
  archivedRevision?: number;
  liveRevision?: number;
}

/** What a difference is about, before it is known how it differs. */
export type Subject = Omit<Difference, 'status'>;

export interface Tally {
  /** Compared with the service: matched or changed. */
  checked: number;
  matched: number;
  changed: number;
  new: number;
  gone: number;
}

export interface PrototypeTally extends Tally {
  archivedRevision: number | null;
  liveRevision: number | null;
}

/** A resource that could not be compared: the service answered with an error that retries did not cure. */
export interface CheckFailure {
  source: string;
  code: string;
  status?: number;
  message: string;
}

export const FAILURES_KEPT = 20;

export interface LiveCheckReport {
  archive: string;
  baseUrl: string;
  seed: number;
  sample: SampleSize;
  /** Resources in the archive the sample is drawn from (lists and prototypes' metadata aside: those are all checked). */
  population: number;
  /** Resources the sample holds. */
  sampled: number;
  /** Of those, compared with the service (or found gone). */
  sampledChecked: number;
  /** Lists and prototypes' metadata, all checked unless the run stopped: how many there are, and were checked. */
  lists: { total: number; checked: number };
  /** Sampled resources, lists and metadata checked, as a share of the archive's (0..1). */
  share: number;
  /** True when everything the sample and the lists called for was checked. */
  complete: boolean;
  stoppedBy?: StopReason;
  differences: Difference[];
  failures: CheckFailure[];
  failureCount: number;
  byKind: Partial<Record<DifferenceKind, Tally>>;
  byPrototype: Record<string, PrototypeTally>;
  requests: number;
  retries: number;
  outages: { count: number; totalMs: number; gaveUp: boolean };
  /** Keys the service stopped honouring during the check, by their 1-based position. */
  keysRefused: number[];
}

/** What a check found: exit 0 (everything checked matched), 3 (a difference), 1 (could not check). */
export type LiveVerdict = 'match' | 'drift' | 'unchecked';

/**
 * A difference found is certain whatever else happened, so drift wins. Otherwise, anything the
 * plan called for and the service did not let us check (failures, a refused key, an outage past
 * its patience) means the answer is not known. A budget the user set is not such a failure: the
 * report says what share was checked.
 */
export function liveVerdict(report: LiveCheckReport): LiveVerdict {
  if (report.differences.length > 0) return 'drift';
  if (report.failureCount > 0) return 'unchecked';
  if (report.stoppedBy === 'KEY_REFUSED' || report.stoppedBy === 'SERVICE_DOWN') return 'unchecked';
  return 'match';
}

/**
 * Differences that no edit on the service explains: the prototype's revision is the same in the
 * archive and on the service, yet a resource of it differs. Right after a backup this means the
 * archive does not hold what was just fetched.
 */
export function unexplained(report: LiveCheckReport): Difference[] {
  return report.differences.filter(
    (d) =>
      d.prototype !== undefined &&
      d.archivedRevision !== undefined &&
      d.liveRevision !== undefined &&
      d.archivedRevision === d.liveRevision,
  );
}

export function emptyTally(): Tally {
  return { checked: 0, matched: 0, changed: 0, new: 0, gone: 0 };
}
