import { TOOL_VERSION } from '../core/version.js';
import { manifestText } from '../manifest/write-manifest.js';
import type { CrawlOutcome } from './crawl-stage.js';
import type { ExportRun } from './export-run.js';
import { RESULT_ERROR_LIMIT, type ExportResult } from './export-options.js';
import type { ArchiveSettings } from './export-settings.js';

/**
 * The manifest, streamed into the zip last from the entries filed by prototype on disk; the zip
 * is renamed into place once whole.
 */
export async function archiveStage(
  run: ExportRun,
  archive: ArchiveSettings,
  startedAt: string,
): Promise<{ bytes: number; entries: number }> {
  run.emit({ type: 'phase', phase: 'archive' });
  const meta = {
    toolVersion: TOOL_VERSION,
    baseUrl: archive.baseUrl,
    startedAt,
    finishedAt: new Date(run.now()).toISOString(),
    stats: run.counters.finalStats(run.model.fileCount),
  };
  return run.archive.finish(manifestText(run.model, meta));
}

/**
 * What the export did, and the workspace closed as what it leaves: given up on an outage, or a key
 * refused mid-run, the bodies fetched so far stay beside the archive, and the same command run
 * again replaces this incomplete archive with a complete one, reusing them.
 */
export async function reportStage(
  run: ExportRun,
  crawled: CrawlOutcome,
  written: { bytes: number },
): Promise<ExportResult> {
  const { model, deadline, counters, fetch } = run;
  const keysRefused = fetch.keys?.refused ?? [];
  const result: ExportResult = {
    out: run.prepared.work.paths.out,
    complete: model.errorCount === 0,
    archiveBytes: written.bytes,
    peakInFlight: run.frontier.peakRunning,
    deadlineReached: deadline.reached,
    prototypes: model.origins(),
    stats: { ...counters.current },
    wireBytes: counters.wireBytes,
    errorCount: model.errorCount,
    outages: fetch.outage?.summary() ?? { count: 0, totalMs: 0, gaveUp: false },
    errors: await model.firstErrors(RESULT_ERROR_LIMIT),
    left: {
      prototypesListed: crawled.prototypesListed,
      prototypesComplete: model.prototypeIds().filter((id) => model.prototype(id)?.complete).length,
      requestsNotStarted: crawled.requestsNotStarted,
      prototypesLeft: crawled.prototypesLeft,
      // The stop's errors other than the one per prototype with work never started.
      requestsCutOff: counters.stopErrors - crawled.unfinishedRecords,
    },
    ...(keysRefused.length > 0 ? { keysRefused } : {}),
    ...(model.notOffered.length > 0 ? { notOffered: model.notOffered } : {}),
  };
  run.emit({ type: 'phase', phase: 'done' });
  const resumable = (deadline.expired && !deadline.reached) || keysRefused.length > 0;
  await run.prepared.work.close(resumable ? 'resumable' : 'done');
  return result;
}
