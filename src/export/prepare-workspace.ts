import type { SinceCache } from '../archive/since-cache.js';
import { firstCandidate, type BodyCache } from '../storage/body-cache.js';
import { openWorkspace, type Workspace } from '../storage/workspace.js';
import { expectedCosts } from '../manifest/previous-costs.js';
import type { EventSink } from './events.js';
import type { ArchiveSettings } from './export-settings.js';

/** What an export keeps beside its output, and the copies it may use instead of requests. */
export interface PreparedWorkspace {
  work: Workspace;
  /** The archive given to --since, opened. */
  since: SinceCache | undefined;
  /** A resumed run's journal, then --since's archive: where a body may be copied from. */
  cache: BodyCache | undefined;
  /** What each prototype cost in --since's archive, in resources, for ordering the crawl. */
  expected: ReadonlyMap<string, number> | undefined;
}

/**
 * The first stage: the spool and journal beside the output (a journal left by a killed run makes
 * this one a resumption) and the earlier archive of --since. Nothing is left open when it fails.
 */
export async function prepareWorkspace(archive: ArchiveSettings, emit: EventSink): Promise<PreparedWorkspace> {
  const work = await openWorkspace(archive.out, archive.baseUrl, archive.force, (reason) =>
    emit({ type: 'journal-set-aside', reason }),
  );
  const since = await openSince(archive, work);
  // What each prototype cost last time, for the progress estimate.
  if (since) emit({ type: 'previous', prototypes: since.costs });
  return {
    work,
    since,
    cache: work.resumed || since ? firstCandidate([work.resumed, since]) : undefined,
    expected: since ? expectedCosts(since.costs) : undefined,
  };
}

async function openSince(archive: ArchiveSettings, work: Workspace): Promise<SinceCache | undefined> {
  const previous = archive.since;
  if (previous === undefined) return undefined;
  try {
    // Imported only with --since: reading an earlier archive brings the zip reader and the streaming JSON parser.
    const { openSinceCache } = await import('../archive/since-cache.js');
    return await openSinceCache(previous, work.spool, { baseUrl: archive.baseUrl });
  } catch (error) {
    await work.close('failed');
    throw error;
  }
}
