import type { RestoreEvent } from '../restore/restore-prototype.js';
import { totalWrites } from '../restore/report.js';
import type { StepWords } from './work-line.js';
import type { WorkDisplay } from './work-progress.js';

type RestoreStep = 'plan' | 'writes';

/** What restore's progress calls its steps: reading both sides to plan, then the writes. */
export const RESTORE_WORDS: Readonly<Record<RestoreStep, StepWords>> = {
  plan: { verb: 'reading the archive and the live elements to plan', unit: null },
  writes: { verb: 'made', unit: 'writes' },
};

/**
 * Restore's events as counted work: the writes the plan holds (none on a dry run), each counted as
 * it is answered, done or failed. Before the plan there is nothing to count, only time passing.
 */
export function restoreProgress(display: WorkDisplay): (event: RestoreEvent) => void {
  let done = 0;
  let total = 0;
  display.set({ step: 'plan', done: 0, total: null });
  return (event) => {
    if (event.type === 'plan' && !event.report.dryRun) {
      total = totalWrites(event.report.planned);
      display.set({ step: 'writes', done, total });
    } else if (event.type === 'write') display.set({ step: 'writes', done: ++done, total });
  };
}
