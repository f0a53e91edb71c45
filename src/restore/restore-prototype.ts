import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import pLimit, { type LimitFunction } from 'p-limit';
import type { OutageEvent } from '../client/outage-monitor.js';
import type { RetryEvent } from '../client/retrying.js';
import type { ServiceOptions } from '../client/service-options.js';
import { openServiceSession, sessionSettingsOf, type ServiceSession } from '../client/service-session.js';
import type { SizeCaps } from '../client/size-caps.js';
import { sourceNameOf } from '../api/entry-paths.js';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { requireId } from '../api/ids.js';
import { shellWords } from '../core/shell-quote.js';
import { acquireLock, refuseLiveLock, type Lock } from '../storage/lock.js';
import { applyPlan } from './apply-plan.js';
import { planWithoutKeys, reportWithoutKeys } from './hide-keys.js';
import type { ArchivedParent, Selection, Skip } from './archived-elements.js';
import { readArchivedPrototype, READ_CAPS } from './archived-elements.js';
import { LiveElements } from './live-elements.js';
import { LiveService, type ReadCaps } from './live-service.js';
import type { ParentPlan, PlannedWrite } from './plan.js';
import { planParent } from './plan.js';
import type { RestorePlan, RestoreReport } from './report.js';
import { reportOfPlan } from './report.js';
import { RESTORE_DEFAULTS } from './restore-defaults.js';
import type { JournalIdentity, JournalState } from './write-journal.js';
import { checkJournalPath, createdKey, readJournal, WriteJournal } from './write-journal.js';

/**
 * Puts a prototype's elements back as an archive holds them, through the service's element
 * writes (service-api.md 4.4): plan from archived vs. live, announce the plan, then write.
 * Pages, layers, discussions and prototypes have no writes in the API and are not restored.
 */
export interface RestoreOptions extends ServiceOptions {
  archive: string;
  prototype: string;
  pages?: readonly string[];
  layers?: readonly string[];
  prune?: boolean;
  dryRun?: boolean;
  /** Where the write journal lives; default beside the archive. */
  journal?: string;
  onEvent?: (event: RestoreEvent) => void;
}

export type RestoreEvent =
  | { type: 'plan'; plan: RestorePlan; report: RestoreReport }
  | { type: 'write'; write: PlannedWrite; outcome: 'done' | 'failed'; newId?: string }
  /** A request failed and waits `delayMs` before it is tried again: told as the wait begins. */
  | { type: 'retry'; method: string; source: string; attempt: number; delayMs: number; reason: string }
  | { type: 'journal-set-aside'; path: string }
  /** Reads in flight at most, lowered while the service throttles and raised again as it keeps up. */
  | { type: 'concurrency'; value: number }
  | ({ type: 'outage' } & OutageEvent);

export { RESTORE_DEFAULTS };

/** `.team.zip.restore-3.jsonl` beside the archive: one journal per archive and prototype. */
export function defaultJournalPath(archive: string, prototype: string): string {
  return join(dirname(archive), `.${basename(archive)}.restore-${prototype}.jsonl`);
}

/**
 * The journal's lock, beside it: `restore.jsonl.rabbit-lock`. A name no other program gives its
 * files: with `.lock` alone, `--journal yarn` would lock on a JavaScript project's yarn.lock.
 */
export function journalLockPath(journal: string): string {
  return `${journal}.rabbit-lock`;
}

/**
 * Plans and (unless dry-run) applies. Throws for what stops a restore before any write (usage,
 * unreadable archive, prototype gone, no key may read it); after writes began, a stop is the
 * report's `fatal`, so what was written is still reported.
 */
export async function restorePrototype(options: RestoreOptions): Promise<RestoreReport> {
  const { selection, caps } = restoreTarget(options);
  // The archive is read first, before anything reaches the service: an id it does not hold, well
  // formed or not ("abc"), is refused naming the ones it does, as search and convert refuse it;
  // and only an id it holds, checked again here, ever goes into a URL.
  const archived = await readArchivedPrototype(options.archive, options.prototype.trim(), selection);
  const prototype = usageId('prototype', options.prototype.trim(), options.archive);
  const journalPath = options.journal ?? defaultJournalPath(options.archive, prototype);
  // Before the lock beside it is made and anything is sent: a journal path that names the archive,
  // or another file, would be appended to and destroyed.
  await checkJournalPath(journalPath, options.archive);
  const service = openRestoreService(options, caps);
  let lock: Lock | undefined;
  try {
    if (!options.dryRun) {
      const what = `the restore journal ${journalPath}`;
      // Versions before locked FILE.lock: a restore of one of them on this journal still holds it.
      await refuseLiveLock(`${journalPath}.lock`, what);
      lock = await acquireLock(journalLockPath(journalPath), what, { flag: '--journal' });
    }
    const live = await readableAs(options.keys, prototype, service.as);
    const { client } = service.session;
    const identity: JournalIdentity = { baseUrl: client.origin + client.basePath, prototype };
    const state = await readJournal(journalPath, identity);
    const elements = new LiveElements(live, prototype, service.limit);
    const made = await makePlan(elements, archived, state, options.prune ?? false, prototype);
    const plan = planWithoutKeys(made.plan, options.keys);
    const report = reportOfPlan(plan, options.dryRun ?? false);
    options.onEvent?.({ type: 'plan', plan, report });
    if (options.dryRun) return report;
    const parts = { options, live, elements, liveIds: made.liveIds, identity, state, journalPath };
    return reportWithoutKeys(await applyWrites(parts, plan, report), options.keys);
  } finally {
    await lock?.release();
    await service.session.close();
  }
}

/** The parents asked for, their ids checked, and the caps of what is read. */
function restoreTarget(options: RestoreOptions): { selection: Selection; caps: ReadCaps } {
  const pages = options.pages?.map((id) => usageId('page', id, options.archive));
  const layers = options.layers?.map((id) => usageId('layer', id, options.archive));
  return {
    selection: { ...(pages ? { pages } : {}), ...(layers ? { layers } : {}) },
    caps: restoreReadCaps(options.caps),
  };
}

/**
 * What restore reads of the service is JSON: --max-size json caps the prototype and its lists,
 * and an element too, up to READ_CAPS.element (as the archive's are read). A cap of another
 * kind would change nothing, so it is refused rather than ignored.
 */
export function restoreReadCaps(caps: Partial<SizeCaps> = {}): ReadCaps {
  const other = (['html', 'png'] as const).find((kind) => caps[kind] !== undefined);
  if (other !== undefined) {
    throw new RabbitError(
      'USAGE',
      `restore reads only JSON from the service: --max-size takes json=MiB, and ${other} has nothing to cap`,
    );
  }
  const json = caps.json ?? READ_CAPS.list;
  return { list: json, element: Math.min(json, READ_CAPS.element) };
}

interface RestoreService {
  session: ServiceSession;
  /** The one limit of reads in flight; the session narrows it while the service throttles. */
  limit: LimitFunction;
  /** The service as one key reaches it. */
  as: (key: string) => LiveService;
}

/**
 * The restore's service session, at restore's defaults. An outage past its patience, or the key
 * refused mid-restore, stops it as Ctrl-C does, with that error as the reason.
 */
function openRestoreService(options: RestoreOptions, caps: ReadCaps): RestoreService {
  const settings = sessionSettingsOf(options, RESTORE_DEFAULTS);
  const limit = pLimit(settings.concurrency);
  const stop = new AbortController();
  const session = openServiceSession(settings, {
    signal: options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal,
    now: options.now ?? Date.now,
    limiter: {
      // Nothing to hold: requests sent during a pause fail and wait for the service with the rest.
      hold: () => undefined,
      release: () => undefined,
      resize: (value) => {
        limit.concurrency = value;
        options.onEvent?.({ type: 'concurrency', value });
      },
    },
    onOutage: (event) => options.onEvent?.({ type: 'outage', ...event }),
    giveUp: (error) => stop.abort(error),
  });
  const onWait = ({ method, source, attempt, delayMs, reason }: RetryEvent): void =>
    options.onEvent?.({ type: 'retry', method, source, attempt, delayMs, reason });
  return { session, limit, as: (key) => new LiveService({ ...session.context, key, caps, onWait }) };
}

interface WriteParts {
  options: RestoreOptions;
  live: LiveService;
  elements: LiveElements;
  liveIds: Map<string, Set<string>>;
  identity: JournalIdentity;
  state: JournalState;
  journalPath: string;
}

/** The plan's writes, journaled; the journal is removed once it has nothing left to say. */
async function applyWrites(parts: WriteParts, plan: RestorePlan, report: RestoreReport): Promise<RestoreReport> {
  const { options, live, elements, state, journalPath } = parts;
  const writes = plan.parents.filter((parent) => parent.writes.length > 0);
  if (writes.length === 0) {
    // Nothing left to write: an interrupted restore this journal was kept for is finished (the
    // live state already holds what its unanswered writes did). Another service's is not ours.
    if (options.journal === undefined && state.setAside === undefined) await rm(journalPath, { force: true });
    return report;
  }
  const journal = await WriteJournal.open(journalPath, parts.identity, state, options.archive);
  if (state.setAside !== undefined) options.onEvent?.({ type: 'journal-set-aside', path: state.setAside });
  report.journal = journalPath;
  try {
    const { retry, random, signal } = live.context;
    await applyPlan(
      {
        live,
        journal,
        retry,
        random,
        signal,
        paths: elements.paths,
        liveIds: parts.liveIds,
        relist: async (parent, skip) => {
          const fresh = await elements.elements(parent, skip);
          return Array.isArray(fresh) ? fresh : [];
        },
        onWrite: (write, outcome, newId) =>
          options.onEvent?.({ type: 'write', write, outcome, ...(newId ? { newId } : {}) }),
      },
      writes,
      report,
    );
  } catch (error) {
    // Stopped between writes (Ctrl-C, the key refused): what was done is in the journal and the report.
    if (!isRabbitError(error)) throw error;
    report.fatal = error;
  } finally {
    await journal.close();
  }
  // The journal exists to finish an interrupted restore; once everything is written it has
  // nothing left to say, and a dot-file left beside the archive only puzzles its owner. One the
  // user named (--journal) is theirs to keep.
  if (options.journal === undefined && report.fatal === undefined && report.failed.length === 0) {
    await rm(journalPath, { force: true });
    delete report.journal;
  }
  return report;
}

async function makePlan(
  elements: LiveElements,
  archived: { parents: readonly ArchivedParent[]; skipped: Skip[]; revision: number },
  state: JournalState,
  prune: boolean,
  prototype: string,
): Promise<{ plan: RestorePlan; liveIds: Map<string, Set<string>> }> {
  const { parents, revision } = archived;
  const skipped = [...archived.skipped];
  const liveParents = { page: await elements.parentIds('page'), layer: await elements.parentIds('layer') };
  const plans: ParentPlan[] = [];
  const liveIds = new Map<string, Set<string>>();
  for (const parent of parents) {
    if (!liveParents[parent.kind].has(parent.id)) {
      skipped.push({
        parent: parent.id,
        reason: `the ${parent.kind} no longer exists; pages and layers cannot be recreated through the API`,
      });
      continue;
    }
    const live = await elements.elements(parent.id);
    if (!Array.isArray(live)) {
      skipped.push(live);
      continue;
    }
    const known = new Map<string, string>();
    for (const element of parent.elements) {
      const id = state.created.get(createdKey(parent.id, element.id));
      if (id !== undefined) known.set(element.id, id);
    }
    liveIds.set(parent.id, new Set(live.map((element) => element.id)));
    plans.push(
      planParent({ parent: parent.id, archived: parent.elements, live, known, keep: new Set(parent.unusable), prune }),
    );
  }
  return { plan: { prototype, revision, parents: plans, skipped, unfinishedBefore: state.unfinished }, liveIds };
}

/** A service client with the first key that may read the prototype; the prototype must exist. */
async function readableAs(
  keys: readonly string[],
  prototype: string,
  make: (key: string) => LiveService,
): Promise<LiveService> {
  const source = sourceNameOf('prototype', { prototype });
  let refused = 0;
  for (const key of keys) {
    const live = make(key);
    const answer = await live.getJson(source, 'list');
    if (answer.status === 200) return live;
    if (answer.status === 401 || answer.status === 403) {
      refused = answer.status;
      continue;
    }
    if (answer.status === 404) {
      throw new RabbitError(
        'HTTP_STATUS',
        `prototype ${prototype} no longer exists on the service; prototypes cannot be recreated through the API`,
        {
          source,
          status: 404,
          errorClass: 'fatal',
        },
      );
    }
    throw new RabbitError('HTTP_STATUS', `GET ${source} answered ${answer.status}`, {
      source,
      status: answer.status,
      errorClass: 'fatal',
    });
  }
  throw new RabbitError('KEY_REFUSED', `no API key given may read prototype ${prototype} (HTTP ${refused})`, {
    source,
    status: refused,
  });
}

function usageId(kind: 'prototype' | 'page' | 'layer', raw: string, archive: string): string {
  try {
    return requireId(kind, raw, 'the command line');
  } catch {
    throw new RabbitError('USAGE', `${JSON.stringify(raw).slice(0, 60)} is not a ${kind} id`, {
      data: { next: ID_HINTS[kind](archive) },
    });
  }
}

/** Where the right id is found: an id is what the archive names a thing by, never its name. */
const ID_HINTS: Record<'prototype' | 'page' | 'layer', (archive: string) => string> = {
  prototype: (archive) => `give a prototype id (digits) as ${shellWords('rabbit-export', 'ls', archive)} lists them`,
  page: () => 'give the id of a page as the archive names it (such as page0001), not its name',
  layer: () => 'give the id of a layer as the archive names it (such as layer1), not its name',
};
