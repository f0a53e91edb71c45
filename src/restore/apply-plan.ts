import type { RetryPolicy } from '../client/retry-policy.js';
import { retrying, type Outcome } from '../client/retrying.js';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { ownerKindOf } from '../api/ids.js';
import type { LiveService, WriteResult } from './live-service.js';
import type { ElementState, PlannedWrite } from './plan.js';
import { contains } from './plan.js';
import type { RestoreReport } from './report.js';
import { totalWrites } from './report.js';
import type { WriteJournal } from './write-journal.js';

/**
 * Sends a plan's writes one at a time, each journaled before and after. One write at a time is
 * deliberate: a restore is a few dozen writes, and sequential writes keep "what was done before
 * the stop" a prefix of the plan that the journal and the report can state exactly.
 */
export interface ApplyContext {
  live: LiveService;
  journal: WriteJournal;
  retry: RetryPolicy;
  random: () => number;
  signal: AbortSignal;
  /** Sources of a parent's element list and of one element, and the element's bare form for DELETE. */
  paths: {
    list(parent: string): string;
    element(parent: string, id: string): string;
    bare(parent: string, id: string): string;
  };
  /** The elements of a parent that are live now, except those in `skip`: to find a create whose answer was lost. */
  relist(parent: string, skip: ReadonlySet<string>): Promise<ElementState[]>;
  /** Live ids per parent when the plan was made. */
  liveIds: Map<string, Set<string>>;
  onWrite?: (write: PlannedWrite, outcome: 'done' | 'failed', newId?: string) => void;
}

export type ParentWrites = Array<{ parent: string; writes: readonly PlannedWrite[] }>;

export async function applyPlan(ctx: ApplyContext, parents: ParentWrites, report: RestoreReport): Promise<void> {
  for (const { writes } of parents) {
    for (const write of writes) {
      if (ctx.signal.aborted) throw stoppedBy(ctx.signal);
      await ctx.journal.begin(write);
      const result = write.op === 'create' ? await create(ctx, write) : await repeatable(ctx, write);
      if (result.kind === 'ok') {
        await ctx.journal.done(write, result.newId);
        report.done[write.op]++;
        if (write.op === 'create' && result.newId !== undefined) report.idMap[write.archivedId] = result.newId;
        ctx.onWrite?.(write, 'done', result.newId);
        continue;
      }
      const status = result.kind === 'refused' ? result.status : result.error.status;
      await ctx.journal.failed(write, status);
      ctx.onWrite?.(write, 'failed');
      if (status === 403 || status === 401) {
        report.fatal = refusedKey(status, totalWrites(report.done));
        return;
      }
      report.failed.push({
        op: write.op,
        parent: write.parent,
        element: write.op === 'delete' ? write.id : write.archivedId,
        ...(status !== undefined ? { status } : {}),
        ...(result.kind === 'unknown' ? { code: result.error.code } : {}),
        message: failureMessage(write, result),
      });
    }
  }
}

/** PUT and DELETE may be repeated; the service's retries live in LiveService. */
async function repeatable(ctx: ApplyContext, write: Exclude<PlannedWrite, { op: 'create' }>): Promise<WriteResult> {
  if (write.op === 'update')
    return ctx.live.put(ctx.paths.element(write.parent, write.id), JSON.stringify(write.attributes));
  const result = await ctx.live.delete(ctx.paths.bare(write.parent, write.id));
  // Gone is what a delete wants, whether this run or someone else removed it first.
  return result.kind === 'refused' && result.status === 404 ? { kind: 'ok', status: 404 } : result;
}

/**
 * A POST, sent again only after a fresh listing shows it was not applied: a POST whose answer was
 * lost may have created the element, and a blind retry would create it twice. The waiting between
 * tries is the client's (client/retrying.ts): its backoff, and the outage pause, after which the
 * listing is made first all the same.
 */
async function create(ctx: ApplyContext, write: Extract<PlannedWrite, { op: 'create' }>): Promise<WriteResult> {
  const known = ctx.liveIds.get(write.parent) ?? new Set<string>();
  ctx.liveIds.set(write.parent, known);
  const body = JSON.stringify(write.attributes);
  const wanted: ElementState = { id: write.archivedId, attributes: write.attributes };
  const source = ctx.paths.list(write.parent);
  let lost: Extract<WriteResult, { kind: 'unknown' }> | undefined;
  const attempt = async (n: number): Promise<Outcome<WriteResult>> => {
    if (n > 1) {
      const fresh = await ctx.relist(write.parent, known);
      for (const element of fresh) known.add(element.id);
      const applied = fresh.find((element) => contains(element, wanted));
      if (applied !== undefined) return { done: { kind: 'ok', status: 200, newId: applied.id } };
    }
    const result = await ctx.live.post(source, body);
    if (result.kind === 'ok' && result.newId !== undefined) known.add(result.newId);
    if (result.kind !== 'unknown') return { done: result };
    lost = result;
    return { failed: result.error };
  };
  try {
    return await retrying(
      { ...ctx.live.context, retry: ctx.retry, random: ctx.random, signal: ctx.signal },
      { method: 'POST', source, attempt, retryable: () => true, ...ctx.live.waits() },
    );
  } catch (error) {
    if (lost !== undefined && error === lost.error) return lost;
    throw error;
  }
}

function refusedKey(status: number, written: number): RabbitError {
  const what = written === 0 ? 'nothing was written' : `${written} writes were done before it (see the report)`;
  return new RabbitError(
    'KEY_REFUSED',
    `the API key is read-only: the service refused a write with HTTP ${status}; ${what}. A restore needs a read-write key.`,
    // The key works, it just cannot write: the next step is another key, not copying this one again.
    { status, data: { access: 'read-only' } },
  );
}

function failureMessage(write: PlannedWrite, result: Exclude<WriteResult, { kind: 'ok' }>): string {
  if (result.kind === 'unknown') return result.error.message;
  if (result.status === 404 && write.op === 'update') return 'the element was deleted while the restore ran';
  if (result.status === 404) return `the ${ownerKindOf(write.parent)} no longer exists`;
  return `the service answered ${result.status}`;
}

/** Why the writes stopped: the outage's SERVICE_DOWN when its patience ran out, else an interruption. */
function stoppedBy(signal: AbortSignal): RabbitError {
  const reason: unknown = signal.reason;
  return isRabbitError(reason) ? reason : new RabbitError('INTERRUPTED', 'interrupted');
}
