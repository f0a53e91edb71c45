import { setMaxListeners } from 'node:events';
import { isRabbitError, type RabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { SecretMarker } from '../core/secret-marker.js';
import { TOOL_VERSION } from '../core/version.js';
import { HttpClient } from '../client/http-client.js';
import { AccountCrawler, DEFAULT_SIZE_CAPS, JOURNAL_ORIGIN } from '../crawl/crawl-account.js';
import { Frontier } from '../crawl/frontier.js';
import { ArchiveModel } from '../manifest/archive-model.js';
import { manifestText } from '../manifest/write-manifest.js';
import { firstCandidate } from '../storage/body-cache.js';
import { expectedCosts } from '../manifest/previous-costs.js';
import { openWorkspace } from '../storage/workspace.js';
import { OfflineViewer } from '../site/build-viewer.js';
import { ArchiveSink } from '../archive/archive-sink.js';
import { Deadline, recordDeadlineError, recordUnfinished } from './deadline.js';
import type { EventSink } from './events.js';
import {
  checkExportOptions,
  EXPORT_DEFAULTS,
  RESULT_ERROR_LIMIT,
  type ExportOptions,
  type ExportResult,
} from './export-options.js';
import { interrupted, sanitize } from './failure.js';
import { keyRefusedError } from '../client/key-refusal.js';
import { errorEvents, fetchContext, progressHooks } from './fetch-setup.js';
import type { RunStats } from '../manifest/types.js';

export { EXPORT_DEFAULTS, type ExportOptions, type ExportResult } from './export-options.js';

/**
 * Exports everything the keys can read into one zip at `options.out`: crawl -> store -> archive.
 * Bodies go to a spool beside the output as they arrive (with a journal, so the same command
 * resumes after a kill), each goes into the zip as soon as it is stored, and manifest.json goes in
 * last, streamed from the entries filed by prototype on disk. The zip is written to a temp file
 * and renamed into place only when whole. Resource failures are recorded in the manifest
 * (complete: false); fatal ones throw a RabbitError and leave nothing at `out`.
 */
export async function exportAccount(options: ExportOptions): Promise<ExportResult> {
  const { concurrency, transport } = checkExportOptions(options);
  const now = options.now ?? Date.now;
  const emit: EventSink = options.onEvent ?? (() => undefined);
  const startedAt = new Date(now()).toISOString();
  const work = await openWorkspace(options.out, options.baseUrl, options.force ?? false, (reason) =>
    emit({ type: 'journal-set-aside', reason }),
  );
  // Imported only with --since: reading an earlier archive brings the zip reader and the streaming JSON parser.
  const previous = options.since;
  const since =
    previous === undefined
      ? undefined
      : await import('../archive/since-cache.js')
          .then(({ openSinceCache }) => openSinceCache(previous, work.spool, { baseUrl: options.baseUrl }))
          .catch(async (error: unknown) => {
            await work.close('failed');
            throw error;
          });
  // The one owner of cancellation: every request, backoff and write listens on this signal.
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const abort = (): void => controller.abort(options.signal?.reason);
  // Only the caller's signal (Ctrl-C, SIGTERM) makes a failure an interruption: the controller is
  // also aborted to stop everything after a failure, which must then be told as what it was.
  const stoppedByUser = (): boolean => options.signal?.aborted === true;
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) abort();

  const client = new HttpClient({
    baseUrl: options.baseUrl,
    connections: concurrency,
    timeoutMs: options.timeoutMs ?? EXPORT_DEFAULTS.timeoutMs,
    ...transport,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const frontier = new Frontier({ concurrency, ahead: client.queueAhead });
  // At --max-duration nothing new starts and requests in flight end with DEADLINE; so too, with
  // SERVICE_DOWN, when an outage outlasts --outage-patience.
  const deadline: Deadline = new Deadline(
    options.maxDurationMs,
    () => frontier.halt(deadline.error()),
    options.deadlineTimer,
    true,
  );
  const stats: RunStats = { requests: 0, retries: 0, bytes: 0, files: 0 };
  const wire = { bytes: 0 };
  // The keys are replaced in every body and every text the archive keeps (core/secret-marker.ts).
  const secrets = SecretMarker.of(options.keys);
  const sink = new ArchiveSink(work.paths.out, {
    spool: work.spool,
    signal: controller.signal,
    onProgress: (bytes, entries) => emit({ type: 'archive-progress', bytes, entries, total: model.fileCount + 1 }),
    onBacklog: (behind) => (behind ? frontier.pause() : frontier.resume()),
  });
  const model = new ArchiveModel(
    work.entries,
    (file) => sink.add(file),
    (text) => {
      const clean = redactSecrets(text, options.keys);
      return secrets ? secrets.redactText(clean) : clean;
    },
  );
  void sink.written.catch((error: unknown) => frontier.stop(error));
  const fetch = fetchContext({
    options,
    client,
    spool: work.spool,
    frontier,
    signal: deadline.requestSignal(controller.signal),
    stats,
    wire,
    emit,
    now,
    giveUp: (error) => deadline.stopNow(error),
    secrets,
  });
  const errorEvent = errorEvents(emit, options.keys);
  // Errors of the stop itself (DEADLINE, or SERVICE_DOWN past the patience): work left, not failures.
  let stopErrors = 0;
  const failed = (source: string, error: RabbitError): void => {
    if (deadline.cutOff(error)) stopErrors++;
    errorEvent(source, error);
  };
  // Page requisites are fetched as the crawl stores the pages naming them, and prototypes are made
  // viewable as they are done, not after the crawl.
  const viewer = new OfflineViewer({
    fetch,
    frontier,
    model,
    service: { origin: client.origin, basePath: client.basePath },
    baseUrl: options.baseUrl,
    pages: (options.formats ?? EXPORT_DEFAULTS.formats).has('html'),
    onFailed: failed,
  });

  try {
    // What each prototype cost last time, for the progress estimate.
    if (since) emit({ type: 'previous', prototypes: since.costs });
    emit({
      type: 'start',
      baseUrl: options.baseUrl,
      out: work.paths.out,
      concurrency,
      resumed: work.resumed?.size ?? 0,
      ...(client.proxyHost ? { proxy: client.proxyHost } : {}),
    });
    emit({ type: 'phase', phase: 'crawl' });
    const crawler = new AccountCrawler({
      fetch,
      frontier,
      model,
      keys: options.keys,
      caps: { ...DEFAULT_SIZE_CAPS, ...options.caps },
      formats: options.formats ?? EXPORT_DEFAULTS.formats,
      ...(options.prototypes ? { only: options.prototypes } : {}),
      ...(options.firstContactMs !== undefined ? { firstContactMs: options.firstContactMs } : {}),
      ...(work.resumed || since ? { cache: firstCandidate([work.resumed, since]) } : {}),
      ...(since ? { expected: expectedCosts(since.costs) } : {}),
      hooks: {
        ...progressHooks(emit, (id) => viewer.prototypeDone(id)),
        stored: (file, proto, reusedFrom) => {
          if (!proto) return;
          viewer.stored(file, proto.id);
          model.noteOrigin(proto.id, file.path, reusedFrom === JOURNAL_ORIGIN ? undefined : reusedFrom);
          if (reusedFrom !== JOURNAL_ORIGIN) work.journal.record(file, proto, reusedFrom);
          if (reusedFrom !== undefined) emit({ type: 'reused', source: file.source, bytes: file.size });
        },
        failed,
      },
    });
    controller.signal.addEventListener('abort', () => frontier.stop(interrupted()), { once: true });
    let left = { prototypesListed: 0, requestsNotStarted: 0, prototypesLeft: 0, unfinishedRecords: 0 };
    try {
      await crawler.start().catch((error: unknown) => {
        // The prototype list itself cut off by the deadline still leaves an archive.
        if (!deadline.cutOff(error)) throw error;
        recordDeadlineError(model, error, failed);
      });
      await frontier.drain();
      since?.close(); // the crawl was PREV's only reader: its index need not live through the last passes
      // The prototypes of a key refused mid-run say so; what else is undone, the deadline's reason.
      const refused = new Map((fetch.keys?.refused ?? []).map((r) => [options.keys[r.keyNumber - 1] as string, r]));
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
      left = {
        prototypesListed: crawler.listedCount,
        requestsNotStarted: unfinished.reduce((sum, [, tasks]) => sum + tasks, 0),
        prototypesLeft: unfinished.length,
        unfinishedRecords: stopped.length,
      };
      emit({ type: 'phase', phase: 'requisites' });
      await viewer.finish();
    } catch (error) {
      frontier.stop(error);
      controller.abort();
      await frontier.quiet();
      throw stoppedByUser() && !isRabbitError(error) ? interrupted() : error;
    }

    emit({ type: 'phase', phase: 'archive' });
    stats.files = model.fileCount;
    const keysRefused = fetch.keys?.refused ?? [];
    const meta = {
      toolVersion: TOOL_VERSION,
      baseUrl: options.baseUrl,
      startedAt,
      finishedAt: new Date(now()).toISOString(),
      stats,
    };
    const written = await sink.finish(manifestText(model, meta));
    const result: ExportResult = {
      out: work.paths.out,
      complete: model.errorCount === 0,
      archiveBytes: written.bytes,
      peakInFlight: frontier.peakRunning,
      deadlineReached: deadline.reached,
      prototypes: model.origins(),
      stats,
      wireBytes: wire.bytes,
      errorCount: model.errorCount,
      outages: fetch.outage?.summary() ?? { count: 0, totalMs: 0, gaveUp: false },
      errors: await model.firstErrors(RESULT_ERROR_LIMIT),
      left: {
        prototypesListed: left.prototypesListed,
        prototypesComplete: model.prototypeIds().filter((id) => model.prototype(id)?.complete).length,
        requestsNotStarted: left.requestsNotStarted,
        prototypesLeft: left.prototypesLeft,
        // The stop's errors other than the one per prototype with work never started.
        requestsCutOff: stopErrors - left.unfinishedRecords,
      },
      ...(keysRefused.length > 0 ? { keysRefused } : {}),
      ...(model.notOffered.length > 0 ? { notOffered: model.notOffered } : {}),
    };
    emit({ type: 'phase', phase: 'done' });
    // Given up on an outage, or a key refused mid-run: the bodies fetched so far stay beside the
    // archive, and the same command run again replaces this incomplete archive with a complete
    // one, reusing them.
    const resumable = (deadline.expired && !deadline.reached) || keysRefused.length > 0;
    await work.close(resumable ? 'resumable' : 'done');
    return result;
  } catch (error) {
    await sink.fail(error);
    const failure = sanitize(error, options.keys, stoppedByUser());
    await work.close(isRabbitError(failure, 'INTERRUPTED') ? 'interrupted' : 'failed');
    throw failure;
  } finally {
    deadline.cancel();
    options.signal?.removeEventListener('abort', abort);
    since?.close();
    await client.close();
  }
}
