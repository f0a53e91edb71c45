import type { RabbitError } from '../core/errors.js';
import type { Skip } from './archived-elements.js';
import type { ParentPlan, PlannedWrite } from './plan.js';

/**
 * What a restore planned and did, for the CLI to print and a program to read. Counts are the
 * planned ones on a dry run and the writes done otherwise.
 */
export interface WriteCounts {
  create: number;
  update: number;
  delete: number;
}

export interface WriteFailure {
  op: PlannedWrite['op'];
  parent: string;
  /** The archived id (create, update) or the live id (delete). */
  element: string;
  status?: number;
  code?: string;
  message: string;
}

export interface RestorePlan {
  prototype: string;
  revision: number;
  parents: ParentPlan[];
  skipped: Skip[];
  /** Writes of an earlier run of this restore that began and never finished (their answers were lost). */
  unfinishedBefore: number;
}

export interface RestoreReport {
  prototype: string;
  dryRun: boolean;
  planned: WriteCounts;
  done: WriteCounts;
  unchanged: number;
  skipped: Skip[];
  /** Archived id -> the live id it has now, for every element not live under its archived id. */
  idMap: Record<string, string>;
  /** Live attributes the archive lacks; an update cannot remove them (service-api.md 4.4 rule 1). */
  extraAttributes: Array<{ parent: string; id: string; names: string[] }>;
  /** Live elements the archive does not have, left alone without --prune. */
  strays: Array<{ parent: string; id: string }>;
  failed: WriteFailure[];
  /** What stopped the run, after `done` writes; nothing more was sent after it. */
  fatal?: RabbitError;
  journal?: string;
}

export function countWrites(writes: readonly PlannedWrite[]): WriteCounts {
  const counts: WriteCounts = { create: 0, update: 0, delete: 0 };
  for (const write of writes) counts[write.op]++;
  return counts;
}

export function totalWrites(counts: WriteCounts): number {
  return counts.create + counts.update + counts.delete;
}

/** The report of a plan before anything was written. */
export function reportOfPlan(plan: RestorePlan, dryRun: boolean): RestoreReport {
  const idMap: Record<string, string> = {};
  const extraAttributes: RestoreReport['extraAttributes'] = [];
  const strays: RestoreReport['strays'] = [];
  let unchanged = 0;
  for (const parent of plan.parents) {
    Object.assign(idMap, parent.found);
    unchanged += parent.unchanged.length;
    for (const extra of parent.extraAttributes) extraAttributes.push({ parent: parent.parent, ...extra });
    for (const id of parent.strays) strays.push({ parent: parent.parent, id });
  }
  return {
    prototype: plan.prototype,
    dryRun,
    planned: countWrites(plan.parents.flatMap((parent) => parent.writes)),
    done: { create: 0, update: 0, delete: 0 },
    unchanged,
    skipped: plan.skipped,
    idMap,
    extraAttributes,
    strays,
    failed: [],
  };
}
