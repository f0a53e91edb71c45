import { redactSecrets } from '../core/redact.js';
import type { RestorePlan, RestoreReport } from './report.js';

/**
 * Restore tells what it found live: attributes the archive lacks or that changed, ids it cannot
 * use, why a parent was skipped or a write failed. That is the service's text, and a service may
 * echo the key it was sent (as an attribute's name, an id in a list). The run's keys are hidden
 * from it, in every encoding the body scan knows, before the plan or the report leaves restore.
 */
export function planWithoutKeys(plan: RestorePlan, keys: readonly string[]): RestorePlan {
  const hide = (text: string): string => redactSecrets(text, keys);
  return {
    ...plan,
    parents: plan.parents.map((parent) => ({
      ...parent,
      writes: parent.writes.map((write) =>
        write.op === 'update' ? { ...write, changed: write.changed.map(hide) } : write,
      ),
      extraAttributes: parent.extraAttributes.map((extra) => ({ ...extra, names: extra.names.map(hide) })),
    })),
    skipped: plan.skipped.map((skip) => ({ ...skip, reason: hide(skip.reason) })),
  };
}

/** The report's failures and its stop, their messages cleared of the run's keys (the plan's part already is). */
export function reportWithoutKeys(report: RestoreReport, keys: readonly string[]): RestoreReport {
  const hide = (text: string): string => redactSecrets(text, keys);
  if (report.fatal !== undefined) report.fatal.message = hide(report.fatal.message);
  return {
    ...report,
    skipped: report.skipped.map((skip) => ({ ...skip, reason: hide(skip.reason) })),
    failed: report.failed.map((failure) => ({ ...failure, message: hide(failure.message) })),
  };
}
