import { keyRefusedError } from '../client/key-refusal.js';
import { AccountCrawler } from '../crawl/crawl-account.js';
import { archiveSinkForCrawl } from './archive-sink-for-crawl.js';
import { recordDeadlineError, recordUnfinished } from './deadline.js';
import type { ExportRun } from './export-run.js';
import type { CrawlSettings } from './export-settings.js';

/** How far the crawl got, for the result's `left`. */
export interface CrawlOutcome {
  prototypesListed: number;
  requestsNotStarted: number;
  prototypesLeft: number;
  /** Errors recorded for prototypes with work never started (one each), among the stop's errors. */
  unfinishedRecords: number;
}

/**
 * The crawl: the first contact (the prototype lists, within firstContactMs), then every resource
 * below them, each body into the archive as it is stored. A stop (--max-duration, an outage past
 * its patience, a key refused) still leaves an archive: what was left undone is recorded per
 * prototype with the stop's code.
 */
export async function crawlStage(run: ExportRun, crawl: CrawlSettings): Promise<CrawlOutcome> {
  const { model, deadline, frontier, fetch, prepared } = run;
  const failed = run.failed.bind(run);
  run.emit({ type: 'phase', phase: 'crawl' });
  const crawler = new AccountCrawler({
    fetch,
    frontier,
    sink: archiveSinkForCrawl({ model, viewer: run.viewer, journal: prepared.work.journal, emit: run.emit, failed }),
    keys: crawl.keys,
    caps: crawl.caps,
    formats: crawl.formats,
    firstContactMs: crawl.firstContactMs,
    ...(crawl.only ? { only: crawl.only } : {}),
    ...(prepared.cache ? { cache: prepared.cache } : {}),
    ...(prepared.expected ? { expected: prepared.expected } : {}),
  });
  await crawler.start().catch((error: unknown) => {
    // The prototype list itself cut off by the deadline still leaves an archive.
    if (!deadline.cutOff(error)) throw error;
    recordDeadlineError(model, error, failed);
  });
  await frontier.drain();
  prepared.since?.close(); // the crawl was PREV's only reader: its index need not live through the last passes
  // The prototypes of a key refused mid-run say so; what else is undone, the deadline's reason.
  const refused = new Map((fetch.keys?.refused ?? []).map((r) => [crawl.keys[r.keyNumber - 1] as string, r]));
  for (const [key, refusal] of refused)
    recordUnfinished(
      model,
      crawler.unfinishedPrototypes((k) => k === key),
      keyRefusedError(refusal),
      failed,
    );
  const unfinished = crawler.unfinishedPrototypes();
  const stopped = deadline.expired ? crawler.unfinishedPrototypes((k) => !refused.has(k)) : [];
  recordUnfinished(model, stopped, deadline.error(), failed);
  return {
    prototypesListed: crawler.listedCount,
    requestsNotStarted: unfinished.reduce((sum, [, tasks]) => sum + tasks, 0),
    prototypesLeft: unfinished.length,
    unfinishedRecords: stopped.length,
  };
}

/** The page assets still to fetch and the offline viewer's last files (index.html, the search index). */
export async function viewerStage(run: ExportRun): Promise<void> {
  run.emit({ type: 'phase', phase: 'requisites' });
  await run.viewer.finish();
}
