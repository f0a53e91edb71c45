import { rm } from 'node:fs/promises';
import type { ProxySettings } from '../client/proxy-env.js';
import { basename, dirname, join } from 'node:path';
import type { Dispatcher } from 'undici';
import { HttpClient } from '../client/http-client.js';
import { RateLimiter } from '../client/rate-limiter.js';
import type { ServiceOptions } from '../client/service-options.js';
import type { OutageEvent } from '../client/outage-monitor.js';
import type { OutagePolicy } from '../client/outage-policy.js';
import { requestDefaults, watchOutage } from '../client/service-watch.js';
import type { StallPolicy } from '../client/transfer-watchdog.js';
import { sourceNameOf } from '../api/entry-paths.js';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { requireId } from '../api/ids.js';
import { acquireLock } from '../storage/lock.js';
import { applyPlan } from './apply-plan.js';
import type { ArchivedParent, Skip } from './archived-elements.js';
import { readArchivedPrototype, READ_CAPS } from './archived-elements.js';
import { LiveElements } from './live-elements.js';
import { LiveService } from './live-service.js';
import type { ParentPlan, PlannedWrite } from './plan.js';
import { planParent } from './plan.js';
import type { RestorePlan, RestoreReport } from './report.js';
import { reportOfPlan } from './report.js';
import type { JournalIdentity, JournalState } from './write-journal.js';
import { createdKey, readJournal, WriteJournal } from './write-journal.js';

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
  signal?: AbortSignal;
  onEvent?: (event: RestoreEvent) => void;
  /** Proxy settings, e.g. proxySettingsFromEnv(process.env); none connects directly. */
  proxy?: ProxySettings;
  /** Allow an http:// base URL to a host that is not loopback (the key in clear text). */
  allowInsecureHttp?: boolean;
  dispatcher?: Dispatcher;
  now?: () => number;
  random?: () => number;
  /** How retries and the outage pause wait (tests pass a fake clock's); rejects when its signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  outage?: Partial<OutagePolicy>;
  outagePatienceMs?: number;
  stall?: Partial<StallPolicy>;
}

export type RestoreEvent =
  | { type: 'plan'; plan: RestorePlan; report: RestoreReport }
  | { type: 'write'; write: PlannedWrite; outcome: 'done' | 'failed'; newId?: string }
  | { type: 'retry'; method: string; source: string; attempt: number; delayMs: number; reason: string }
  | { type: 'journal-set-aside'; path: string }
  | ({ type: 'outage' } & OutageEvent);

export const RESTORE_DEFAULTS = { concurrency: 4, timeoutMs: 60_000 } as const;

/** `.team.zip.restore-3.jsonl` beside the archive: one journal per archive and prototype. */
export function defaultJournalPath(archive: string, prototype: string): string {
  return join(dirname(archive), `.${basename(archive)}.restore-${prototype}.jsonl`);
}

/**
 * Plans and (unless dry-run) applies. Throws for what stops a restore before any write (usage,
 * unreadable archive, prototype gone, no key may read it); after writes began, a stop is the
 * report's `fatal`, so what was written is still reported.
 */
export async function restorePrototype(options: RestoreOptions): Promise<RestoreReport> {
  const prototype = usageId('prototype', options.prototype);
  const pages = options.pages?.map((id) => usageId('page', id));
  const layers = options.layers?.map((id) => usageId('layer', id));
  // An outage past its patience stops the restore as Ctrl-C does, with SERVICE_DOWN as the reason.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const defaults = requestDefaults(options);
  const { retry, random } = defaults;
  const now = options.now ?? Date.now;

  const { parents, skipped, revision } = await readArchivedPrototype(options.archive, prototype, {
    ...(pages ? { pages } : {}),
    ...(layers ? { layers } : {}),
  });

  const client = new HttpClient({
    baseUrl: options.baseUrl,
    connections: options.concurrency ?? RESTORE_DEFAULTS.concurrency,
    timeoutMs: options.timeoutMs ?? RESTORE_DEFAULTS.timeoutMs,
    ...(options.proxy ? { proxy: options.proxy } : {}),
    ...(options.allowInsecureHttp ? { allowInsecureHttp: true } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const journalPath = options.journal ?? defaultJournalPath(options.archive, prototype);
  const lock = options.dryRun
    ? undefined
    : await acquireLock(`${journalPath}.lock`, `the restore journal ${journalPath}`);
  try {
    const rateLimiter = options.maxRps ? new RateLimiter(options.maxRps, now) : undefined;
    // Nothing to hold: requests sent during the pause fail and wait for the service with the rest.
    const outage = watchOutage({
      client,
      keys: options.keys,
      policy: defaults.outage,
      now,
      sleep: defaults.sleep,
      signal,
      hold: () => undefined,
      release: () => undefined,
      onEvent: (event) => options.onEvent?.({ type: 'outage', ...event }),
      giveUp: (error) => stop.abort(error),
    });
    const live = await readableAs(
      options.keys,
      prototype,
      (key) =>
        new LiveService({
          client,
          key,
          retry,
          signal,
          random,
          now,
          sleep: defaults.sleep,
          stall: defaults.stall,
          outage,
          ...(rateLimiter ? { rateLimiter } : {}),
          onRetry: (event) => options.onEvent?.({ type: 'retry', ...event }),
        }),
    );
    const identity: JournalIdentity = { baseUrl: client.origin + client.basePath, prototype };
    const state = await readJournal(journalPath, identity);
    const elements = new LiveElements(live, prototype, options.concurrency ?? RESTORE_DEFAULTS.concurrency);
    const { plan, liveIds } = await makePlan(
      elements,
      parents,
      skipped,
      state,
      options.prune ?? false,
      prototype,
      revision,
    );
    const report = reportOfPlan(plan, options.dryRun ?? false);
    options.onEvent?.({ type: 'plan', plan, report });
    const writes = plan.parents.filter((parent) => parent.writes.length > 0);
    if (options.dryRun) return report;
    if (writes.length === 0) {
      // Nothing left to write: an interrupted restore this journal was kept for is finished (the
      // live state already holds what its unanswered writes did). Another service's is not ours.
      if (options.journal === undefined && state.setAside === undefined) await rm(journalPath, { force: true });
      return report;
    }

    const journal = await WriteJournal.open(journalPath, identity, state);
    if (state.setAside !== undefined) options.onEvent?.({ type: 'journal-set-aside', path: state.setAside });
    report.journal = journalPath;
    try {
      await applyPlan(
        {
          live,
          journal,
          retry,
          random,
          signal,
          paths: elements.paths,
          liveIds,
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
      // Stopped between writes (Ctrl-C): what was done is in the journal and the report.
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
  } finally {
    await lock?.release();
    await client.close();
  }
}

async function makePlan(
  elements: LiveElements,
  parents: readonly ArchivedParent[],
  skippedInArchive: Skip[],
  state: JournalState,
  prune: boolean,
  prototype: string,
  revision: number,
): Promise<{ plan: RestorePlan; liveIds: Map<string, Set<string>> }> {
  const skipped = [...skippedInArchive];
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
    const answer = await live.getJson(source, READ_CAPS.list);
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

function usageId(kind: 'prototype' | 'page' | 'layer', raw: string): string {
  try {
    return requireId(kind, raw, 'the command line');
  } catch {
    throw new RabbitError('USAGE', `${JSON.stringify(raw).slice(0, 60)} is not a ${kind} id`);
  }
}
