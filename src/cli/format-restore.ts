import type { RestorePlan, RestoreReport, WriteFailure } from '../restore/report.js';
import type { PlannedWrite } from '../restore/plan.js';
import { plural, printable } from './format.js';

/** What `restore` prints: the plan before any write, one line per write, the outcome. */
export function formatPlan(plan: RestorePlan, report: RestoreReport): string {
  const { create, update, delete: remove } = report.planned;
  const lines = [
    `restore plan for prototype ${plan.prototype} (archived revision ${plan.revision}): ` +
      `${create} to create, ${update} to update, ${remove} to delete, ${report.unchanged} unchanged`,
  ];
  if (plan.unfinishedBefore > 0) {
    lines.push(
      `  (an earlier run stopped with ${plural(plan.unfinishedBefore, 'write')} unanswered; what they did is in the live state this plan was made from)`,
    );
  }
  for (const parent of plan.parents) {
    for (const write of parent.writes) lines.push(`  ${parent.parent}: ${describeWrite(write)}`);
    for (const [archivedId, liveId] of Object.entries(parent.found)) {
      lines.push(`  ${parent.parent}: ${archivedId} is live as ${liveId} (restored earlier)`);
    }
    for (const id of parent.strays)
      lines.push(`  ${parent.parent}: ${id} is not in the archive; kept (--prune deletes it)`);
    for (const extra of parent.extraAttributes) {
      lines.push(
        `  ${parent.parent}: ${extra.id} has attributes the archive lacks, which the API cannot remove: ${extra.names.map(printable).join(', ')}`,
      );
    }
  }
  for (const skip of report.skipped) lines.push(`  skipped ${skipSubject(skip)}: ${printable(skip.reason)}`);
  return `${lines.join('\n')}\n`;
}

export function formatWrite(write: PlannedWrite, outcome: 'done' | 'failed', newId?: string): string {
  if (outcome === 'failed') return `  failed: ${write.parent}: ${describeWrite(write)}\n`;
  if (write.op === 'create') return `  created ${write.archivedId} on ${write.parent} as ${newId ?? '?'}\n`;
  if (write.op === 'update') return `  updated ${write.id} on ${write.parent}\n`;
  return `  deleted ${write.id} from ${write.parent}\n`;
}

export function formatOutcome(report: RestoreReport): string {
  if (report.dryRun) return 'dry run: nothing was written\n';
  const { create, update, delete: remove } = report.done;
  const lines = [
    `written: ${create} created, ${update} updated, ${remove} deleted; ${report.unchanged} were unchanged`,
  ];
  for (const failure of report.failed) {
    lines.push(`  not restored: ${failure.op} ${failure.element} on ${failure.parent}: ${printable(failure.message)}`);
  }
  // The path holds the archive's name, which may hold what a terminal would obey.
  if (report.journal) lines.push(`journal: ${printable(report.journal)} (${journalNote(report)})`);
  return `${lines.join('\n')}\n`;
}

/**
 * What the kept journal is good for. A rerun is offered only where it can get further: a refused
 * key is refused again (a key that may write is the step), and writes the service refused for
 * what they are (400, 413...) are refused again whatever is rerun; a stop, a lost answer, a
 * server error, a throttle or an element gone meanwhile are not. A run with nothing failed keeps
 * its journal only where --journal named it.
 */
function journalNote(report: RestoreReport): string {
  if (report.fatal === undefined && report.failed.length === 0)
    return 'kept as the record of what was written, as --journal asks';
  if (report.fatal?.code === 'KEY_REFUSED')
    return 'with a read-write key, running the command again resumes without duplicates';
  if (report.fatal !== undefined || report.failed.some(mayPassNextTime))
    return 'running the same command again resumes without duplicates';
  return 'kept as the record of what was written; the service refused the writes above for what they are, and a rerun would send them again to the same answer';
}

/** Whether a failed write may succeed when sent again: no answer, or one that does not judge the write. */
function mayPassNextTime(failure: WriteFailure): boolean {
  const status = failure.status;
  return status === undefined || status >= 500 || [404, 408, 409, 425, 429].includes(status);
}

function describeWrite(write: PlannedWrite): string {
  if (write.op === 'create')
    return `create ${write.archivedId} (${printable(String(write.attributes['type']))}; the service gives it a new id)`;
  if (write.op === 'update') {
    const to = write.archivedId === write.id ? '' : ` (archived as ${write.archivedId})`;
    return `update ${write.id}${to}: ${write.changed.map(printable).join(', ')}`;
  }
  return `delete ${write.id} (not in the archive)`;
}

function skipSubject(skip: { parent?: string; element?: string }): string {
  if (skip.element !== undefined) return `${skip.element}${skip.parent ? ` on ${skip.parent}` : ''}`;
  return skip.parent ?? 'archive';
}
