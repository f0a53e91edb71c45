import { isRabbitError } from '../core/errors.js';
import { readIdList } from '../api/parse.js';
import type { IdKind } from '../api/ids.js';
import { ownerKindOf } from '../api/ids.js';
import { openArchive, type Archive } from '../archive/open-archive.js';
import type { FileEntry } from '../manifest/types.js';
import type { BodyKind } from '../crawl/obtain-body.js';
import { readCheckPlan, type ArchivedList, type CheckPlan, type SampledResource } from './archive-plan.js';
import { SecretMarker } from '../core/secret-marker.js';
import { compareDigests, compareJson, redactLiveBody, type Comparison } from './compare-bodies.js';
import { LiveClient, type LiveAnswer, type LiveClientOptions } from './live-client.js';
import { LiveTally, type LiveProgress } from './live-tally.js';
import { inObjectForm, memberSource } from './resource-kinds.js';
import { EVERYTHING, newSeed, type SampleSize } from './sample-plan.js';
import type { LiveCheckReport, Subject } from './live-report.js';
import { goneList, liveRevisionOf, ROOT_LIST, rootFailure, sameMembers } from './live-answers.js';

export interface LiveCheckOptions extends LiveClientOptions {
  archive: string;
  /** Everything when absent. Lists and prototypes' metadata are always checked in full. */
  sample?: SampleSize;
  /** The sample's seed; a new one (reported) when absent. */
  seed?: number;
  /** Handed, once the plan is read, a reader of how far the check is: the CLI polls it for its progress lines. */
  onStart?: (progress: () => LiveProgress) => void;
}

/**
 * Compares an archive with the service it came from: the lists in full (they reveal what is new
 * and what is gone), every prototype's metadata (it gives the live revision), and a stratified
 * sample of the rest, each fetched as export fetches it and compared with its archived body.
 * Throws only for what stops the check before it begins (the archive unreadable, a list of
 * prototypes the service will not give); the rest is the report.
 */
export async function checkAgainstLive(options: LiveCheckOptions): Promise<LiveCheckReport> {
  const seed = options.seed ?? newSeed();
  const sample = options.sample ?? EVERYTHING;
  const archive = await openArchive(options.archive);
  try {
    const plan = await readCheckPlan(archive, sample, seed);
    const live = await LiveClient.open(options);
    try {
      const tally = new LiveTally(plan, options.keys);
      options.onStart?.(() => tally.progress());
      await new LiveCheck(archive, plan, live, tally, options.keys).run();
      return tally.report({ archive: options.archive, baseUrl: options.baseUrl, seed, sample, live });
    } finally {
      await live.close();
    }
  } finally {
    archive.close();
  }
}

class LiveCheck {
  /** Which key reads each prototype: the first whose live list names it. */
  private readonly owner = new Map<string, string>();
  /** The run's keys as the export replaced them in what it stored. */
  private readonly marker: SecretMarker | undefined;

  constructor(
    private readonly archive: Archive,
    private readonly plan: CheckPlan,
    private readonly live: LiveClient,
    private readonly tally: LiveTally,
    private readonly keys: readonly string[],
  ) {
    this.marker = SecretMarker.of(keys);
  }

  async run(): Promise<void> {
    await this.rootLists();
    for (const id of this.plan.revisions.keys()) {
      if (this.owner.has(id)) this.live.frontier.add(() => this.prototype(id));
      else this.tally.prototypeGone(id);
    }
    await this.live.frontier.drain();
    for (const resource of this.plan.sample) {
      if (this.tally.knownGone(resource.resource)) this.tally.sampledChecked++;
      else this.live.frontier.add(() => this.sampled(resource));
    }
    await this.live.frontier.drain();
  }

  /**
   * The lists of prototypes, one per key, before anything else: without every one of them what
   * is new and what is gone cannot be told, so a failure here ends the check.
   */
  private async rootLists(): Promise<void> {
    const archived = new Set<string>(this.plan.revisions.keys());
    for (const entry of this.plan.rootLists.values())
      for (const id of readIdList(await this.archive.body(entry), 'prototype', entry.path).ids) archived.add(id);
    const listed = new Set<string>();
    for (const [index, key] of this.keys.entries()) {
      const answer = await this.live.get(ROOT_LIST, key, 'json');
      if (answer.type !== 'body') throw rootFailure(answer, index, this.keys);
      const body = answer.buffer as Buffer;
      const ids = readIdList(body, 'prototype', ROOT_LIST).ids;
      for (const id of ids) {
        listed.add(id);
        if (!this.owner.has(id) && this.plan.revisions.has(id)) this.owner.set(id, key);
      }
      const entry = this.plan.rootLists.get(index);
      if (entry) {
        const before = readIdList(await this.archive.body(entry), 'prototype', entry.path).ids;
        this.tally.listChecked();
        if (sameMembers(before, ids) && compareJson(await this.archive.body(entry), body) === 'differs')
          this.tally.record({ status: 'changed', kind: 'list', id: 'prototype', source: ROOT_LIST, path: entry.path });
      }
    }
    for (const id of listed)
      if (!archived.has(id))
        this.tally.record({
          status: 'new',
          kind: 'prototype',
          prototype: id,
          id,
          source: memberSource('prototype', id, id),
        });
    for (const id of archived)
      if (!listed.has(id))
        this.tally.record({
          status: 'gone',
          kind: 'prototype',
          prototype: id,
          id,
          source: memberSource('prototype', id, id),
        });
  }

  /** A prototype's metadata, then its lists: pages', layers' and discussions' first, then each page's and layer's. */
  private async prototype(id: string): Promise<void> {
    const key = this.owner.get(id) as string;
    const source = memberSource('prototype', id, id);
    const answer = await this.live.get(source, key, 'json');
    if (answer.type === 'gone') {
      this.tally.record({ status: 'gone', kind: 'prototype', prototype: id, id, source });
      this.tally.prototypeGone(id);
      return;
    }
    if (answer.type === 'stopped') return;
    if (answer.type === 'failed') this.tally.failed(answer.error);
    else {
      this.tally.liveRevision(id, liveRevisionOf(answer.buffer as Buffer));
      const entry = this.plan.metadata.get(id);
      if (entry) {
        await this.compared(entry, answer, 'json', { kind: 'prototype', prototype: id, id, source });
        this.tally.listChecked();
      }
    }
    const lists = this.plan.lists.get(id) ?? [];
    const top = lists.filter((list) => list.resource.parent === undefined);
    const below = lists.filter((list) => list.resource.parent !== undefined);
    let open = top.length;
    const next = (): void => {
      if (--open > 0) return;
      for (const list of below) {
        if (this.tally.parentGone(id, list.resource.parent as string)) this.tally.listChecked();
        else this.live.frontier.add(() => this.list(list, key));
      }
    };
    if (top.length === 0) {
      open = 1;
      next();
    }
    for (const list of top) this.live.frontier.add(() => this.list(list, key).finally(next));
  }

  /** A list in full: what it names now and did not, and what it named and no longer does. */
  private async list({ entry, resource }: ArchivedList, key: string): Promise<void> {
    const prototype = resource.prototype as string;
    const answer = await this.live.get(entry.source, key, 'json');
    if (answer.type === 'stopped') return;
    const parent = resource.parent;
    if (answer.type === 'gone' && parent !== undefined) {
      // The page or layer whose list this is has gone, with everything on it.
      const kind: IdKind = ownerKindOf(parent);
      this.tally.listChecked();
      this.tally.memberGone(prototype, kind, parent, memberSource(kind, parent, prototype));
      return;
    }
    if (answer.type !== 'body') {
      this.tally.failed(answer.type === 'failed' ? answer.error : goneList(entry.source));
      return;
    }
    const objectForm = inObjectForm(entry.source);
    const archivedBody = await this.archive.body(entry);
    let before: string[];
    let now: string[];
    try {
      before = readIdList(archivedBody, resource.member, entry.path, objectForm).ids;
      now = readIdList(answer.buffer as Buffer, resource.member, entry.source, objectForm).ids;
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      this.tally.failed(error);
      return;
    }
    this.tally.listChecked();
    const had = new Set(before);
    const has = new Set(now);
    for (const id of now)
      if (!had.has(id))
        this.tally.memberNew(
          prototype,
          resource.member,
          id,
          memberSource(resource.member, id, prototype, parent),
          parent,
        );
    for (const id of before)
      if (!has.has(id))
        this.tally.memberGone(
          prototype,
          resource.member,
          id,
          memberSource(resource.member, id, prototype, parent),
          parent,
        );
    if (sameMembers(before, now) && compareJson(archivedBody, answer.buffer as Buffer) === 'differs') {
      const id = resource.member;
      this.tally.record({
        status: 'changed',
        kind: 'list',
        prototype,
        id,
        ...(parent ? { parent } : {}),
        source: entry.source,
        path: entry.path,
      });
    }
  }

  private async sampled({ entry, resource }: SampledResource): Promise<void> {
    const key = this.owner.get(resource.prototype);
    if (key === undefined) return;
    const kind: BodyKind = resource.body;
    const answer = await this.live.get(entry.source, key, kind);
    const what: Subject = {
      kind: resource.kind,
      prototype: resource.prototype,
      id: resource.id,
      ...(resource.parent ? { parent: resource.parent } : {}),
      ...(resource.format ? { format: resource.format } : {}),
      source: entry.source,
    };
    if (answer.type === 'stopped') return;
    if (answer.type === 'failed') return this.tally.failed(answer.error);
    this.tally.sampledChecked++;
    if (answer.type === 'gone') this.tally.record({ status: 'gone', ...what, path: entry.path });
    else await this.compared(entry, answer, kind, what);
  }

  /** Compares a body the service served with the archived one, and tallies the outcome. */
  private async compared(
    entry: FileEntry,
    answer: Extract<LiveAnswer, { type: 'body' }>,
    kind: BodyKind,
    what: Subject,
  ): Promise<void> {
    let comparison: Comparison;
    if (kind === 'png') comparison = compareDigests(entry, answer);
    else {
      const live = redactLiveBody(answer.buffer as Buffer, this.marker);
      const archived = await this.archive.body(entry);
      comparison = kind === 'json' ? compareJson(archived, live) : archived.equals(live) ? 'bytes' : 'differs';
    }
    if (comparison === 'differs') this.tally.record({ status: 'changed', ...what, path: entry.path });
    else this.tally.matched(what.kind, what.prototype);
  }
}
