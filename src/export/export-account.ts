import { archiveStage, reportStage } from './export-report.js';
import { crawlStage, viewerStage } from './crawl-stage.js';
import { announceStart, ExportRun } from './export-run.js';
import type { ExportOptions, ExportResult } from './export-options.js';
import { resolveExportSettings } from './export-settings.js';
import { prepareWorkspace } from './prepare-workspace.js';

export { EXPORT_DEFAULTS, type ExportOptions, type ExportResult } from './export-options.js';

/**
 * Exports everything the keys can read into one zip at `options.out`. Bodies go to a spool beside
 * the output as they arrive (with a journal, so the same command resumes after a kill), each goes
 * into the zip as soon as it is stored, and manifest.json goes in last. The zip is written to a
 * temp file and renamed into place only when whole. Resource failures are recorded in the manifest
 * (complete: false); fatal ones throw a RabbitError and leave nothing at `out`.
 *
 * The options are resolved once into settings, then the stages run in order, each given the
 * section of the settings it reads.
 */
export async function exportAccount(options: ExportOptions): Promise<ExportResult> {
  const settings = resolveExportSettings(options);
  const startedAt = new Date(settings.run.now()).toISOString();
  const prepared = await prepareWorkspace(settings.archive, settings.run.emit);
  const run = new ExportRun(settings, prepared);
  try {
    announceStart(run, settings.http);
    const crawled = await run.fetching(async () => {
      const outcome = await crawlStage(run, settings.crawl);
      await viewerStage(run);
      return outcome;
    });
    const written = await archiveStage(run, settings.archive, startedAt);
    return await reportStage(run, crawled, written);
  } catch (error) {
    throw await run.failure(error, settings.archive.keys);
  } finally {
    await run.close();
  }
}
