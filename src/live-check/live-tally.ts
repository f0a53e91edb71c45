import type { IdKind } from '../api/ids.js';
import { ownerKindOf } from '../api/ids.js';
import type { RabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import type { CheckPlan } from './archive-plan.js';
import type { BodyResource } from './archive-plan.js';
import type { LiveClient } from './live-client.js';
import {
  emptyTally,
  FAILURES_KEPT,
  type CheckFailure,
  type Difference,
  type DifferenceKind,
  type LiveCheckReport,
  type PrototypeTally,
  type Subject,
  type Tally,
} from './live-report.js';
import type { SampleSize } from './sample-plan.js';

/**
 * What the check has found so far, by prototype and by kind, and what it knows to be gone (so a
 * resource under a gone page is not asked for, nor reported twice). A discussion named by two
 * lists, or a page found gone by its own list and by its elements' list, is one difference.
 */
export interface LiveProgress {
  checked: number;
  total: number;
}

export class LiveTally {
  sampledChecked = 0;
  private listsChecked = 0;
  private readonly listsTotal: number;
  private readonly differences: Difference[] = [];
  private readonly reported = new Set<string>();
  private readonly gone = new Set<string>();
  private readonly goneProtos = new Set<string>();
  private readonly revisionsLive = new Map<string, number | null>();
  private readonly failures: CheckFailure[] = [];
  private failureCount = 0;
  private readonly byKind: Partial<Record<DifferenceKind, Tally>> = {};
  private readonly byPrototype: Record<string, PrototypeTally> = {};

  constructor(
    private readonly plan: CheckPlan,
    private readonly keys: readonly string[],
  ) {
    let total = plan.rootLists.size + plan.metadata.size;
    for (const lists of plan.lists.values()) total += lists.length;
    this.listsTotal = total;
    for (const [id, revision] of plan.revisions)
      this.byPrototype[id] = { ...emptyTally(), archivedRevision: revision, liveRevision: null };
  }

  listChecked(): void {
    this.listsChecked++;
  }

  /** How far the check is: lists, metadata and sampled resources checked, of all it will check. */
  progress(): LiveProgress {
    return { checked: this.sampledChecked + this.listsChecked, total: this.plan.sample.length + this.listsTotal };
  }

  liveRevision(prototype: string, revision: number | null): void {
    this.revisionsLive.set(prototype, revision);
    const tally = this.byPrototype[prototype];
    if (tally) tally.liveRevision = revision;
  }

  record(difference: Difference): void {
    const d: Difference = { ...difference, ...this.revisionsOf(difference.prototype) };
    this.differences.push(d);
    for (const tally of this.tallies(d.kind, d.prototype)) {
      tally[d.status]++;
      if (d.status === 'changed') tally.checked++;
    }
  }

  matched(kind: DifferenceKind, prototype: string | undefined): void {
    for (const tally of this.tallies(kind, prototype)) {
      tally.checked++;
      tally.matched++;
    }
  }

  /** A prototype the service no longer has: its lists count as checked, its resources as known gone. */
  prototypeGone(id: string): void {
    if (this.goneProtos.has(id)) return;
    this.goneProtos.add(id);
    this.listsChecked += (this.plan.metadata.has(id) ? 1 : 0) + (this.plan.lists.get(id)?.length ?? 0);
  }

  memberNew(prototype: string, kind: IdKind, id: string, source: string, parent?: string): void {
    if (this.once(`new\0${memberKey(prototype, kind, id, parent)}`))
      this.record({ status: 'new', ...subject(prototype, kind, id, source, parent) });
  }

  memberGone(prototype: string, kind: IdKind, id: string, source: string, parent?: string): void {
    const key = memberKey(prototype, kind, id, parent);
    this.gone.add(key);
    if (this.once(`gone\0${key}`)) this.record({ status: 'gone', ...subject(prototype, kind, id, source, parent) });
  }

  parentGone(prototype: string, parent: string): boolean {
    const kind = ownerKindOf(parent);
    return this.goneProtos.has(prototype) || this.gone.has(memberKey(prototype, kind, parent));
  }

  /**
   * Whether a sampled resource is already known gone: the item it is or belongs to (a rendering's
   * page), that item's page or layer, or its prototype.
   */
  knownGone(resource: BodyResource): boolean {
    const { prototype, item, id, parent } = resource;
    if (this.goneProtos.has(prototype)) return true;
    if (item === 'element')
      return this.parentGone(prototype, parent as string) || this.gone.has(memberKey(prototype, 'element', id, parent));
    return item !== 'prototype' && this.gone.has(memberKey(prototype, item, id));
  }

  failed(error: RabbitError): void {
    this.failureCount++;
    if (this.failures.length < FAILURES_KEPT)
      this.failures.push({
        source: error.source ?? '',
        code: error.code,
        ...(error.status !== undefined ? { status: error.status } : {}),
        message: redactSecrets(error.message, this.keys),
      });
  }

  report(run: {
    archive: string;
    baseUrl: string;
    seed: number;
    sample: SampleSize;
    live: LiveClient;
  }): LiveCheckReport {
    const { live } = run;
    const sampled = this.plan.sample.length;
    const whole = this.plan.population + this.listsTotal;
    const stoppedBy = live.stoppedBy;
    return {
      archive: run.archive,
      baseUrl: run.baseUrl,
      seed: run.seed,
      sample: run.sample,
      population: this.plan.population,
      sampled,
      sampledChecked: this.sampledChecked,
      lists: { total: this.listsTotal, checked: this.listsChecked },
      share: whole === 0 ? 1 : (this.sampledChecked + this.listsChecked) / whole,
      complete: this.sampledChecked === sampled && this.listsChecked === this.listsTotal && this.failureCount === 0,
      ...(stoppedBy ? { stoppedBy } : {}),
      differences: this.differences,
      failures: this.failures,
      failureCount: this.failureCount,
      byKind: this.byKind,
      byPrototype: this.byPrototype,
      requests: live.stats.requests,
      retries: live.stats.retries,
      outages: live.outages,
      keysRefused: live.keysRefused,
    };
  }

  private once(key: string): boolean {
    if (this.reported.has(key)) return false;
    this.reported.add(key);
    return true;
  }

  private revisionsOf(prototype: string | undefined): Pick<Difference, 'archivedRevision' | 'liveRevision'> {
    if (prototype === undefined) return {};
    const archived = this.plan.revisions.get(prototype);
    const live = this.revisionsLive.get(prototype);
    return {
      ...(archived !== undefined ? { archivedRevision: archived } : {}),
      ...(live !== undefined && live !== null ? { liveRevision: live } : {}),
    };
  }

  private tallies(kind: DifferenceKind, prototype: string | undefined): Tally[] {
    const byKind = (this.byKind[kind] ??= emptyTally());
    const out = [byKind];
    if (prototype !== undefined) {
      this.byPrototype[prototype] ??= { ...emptyTally(), archivedRevision: null, liveRevision: null };
      out.push(this.byPrototype[prototype]);
    }
    return out;
  }
}

/** Elements are told apart by their page or layer too: the same id on two parents is two resources. */
function memberKey(prototype: string, kind: IdKind, id: string, parent?: string): string {
  return kind === 'element' ? `${prototype}\0element\0${parent ?? ''}\0${id}` : `${prototype}\0${kind}\0${id}`;
}

function subject(prototype: string, kind: IdKind, id: string, source: string, parent?: string): Subject {
  return { kind, prototype, id, ...(parent && kind === 'element' ? { parent } : {}), source };
}
