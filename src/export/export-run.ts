import { setMaxListeners } from 'node:events';
import { isRabbitError, type RabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { SecretMarker } from '../core/secret-marker.js';
import { HttpClient } from '../client/http-client.js';
import type { FetchContext } from '../crawl/fetch-resource.js';
import { Frontier } from '../crawl/frontier.js';
import { ArchiveModel } from '../manifest/archive-model.js';
import { ArchiveSink } from '../archive/archive-sink.js';
import { OfflineViewer } from '../site/build-viewer.js';
import { Deadline } from './deadline.js';
import type { EventSink } from './events.js';
import type { ExportSettings, HttpSettings } from './export-settings.js';
import { errorEvents, fetchContext } from './fetch-setup.js';
import { interrupted, sanitize } from './failure.js';
import type { PreparedWorkspace } from './prepare-workspace.js';
import { RunCounters } from './run-counters.js';

/**
 * The parts of one export, made once in the order they depend on each other: the client, the
 * frontier its requests queue on, the stop (the caller's signal, --max-duration, an outage past
 * its patience), the zip and its manifest, how each request is made, and the offline viewer. The
 * stages of exportAccount use them; `close` releases them whatever happened.
 */
export class ExportRun {
  readonly counters = new RunCounters();
  readonly emit: EventSink;
  readonly now: () => number;
  readonly client: HttpClient;
  readonly frontier: Frontier;
  readonly deadline: Deadline;
  readonly archive: ArchiveSink;
  readonly model: ArchiveModel;
  readonly fetch: FetchContext;
  readonly viewer: OfflineViewer;
  /** The one owner of cancellation: every request, backoff and write listens on its signal. */
  private readonly controller = new AbortController();
  private readonly callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.controller.abort(this.callerSignal?.reason);
  private readonly errorEvent: (source: string, error: RabbitError) => void;

  constructor(
    settings: ExportSettings,
    readonly prepared: PreparedWorkspace,
  ) {
    const { http, archive, run } = settings;
    const { work } = prepared;
    this.emit = run.emit;
    this.now = run.now;
    setMaxListeners(0, this.controller.signal);
    this.callerSignal = run.signal;
    this.callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (this.callerSignal?.aborted) this.onCallerAbort();

    this.client = new HttpClient({
      baseUrl: http.baseUrl,
      connections: http.concurrency,
      timeoutMs: http.timeoutMs,
      ...http.transport,
      ...(http.dispatcher ? { dispatcher: http.dispatcher } : {}),
    });
    const frontier = new Frontier({ concurrency: http.concurrency, ahead: this.client.queueAhead });
    this.frontier = frontier;
    this.controller.signal.addEventListener('abort', () => frontier.stop(interrupted()), { once: true });
    // At --max-duration nothing new starts and requests in flight end with DEADLINE; so too, with
    // SERVICE_DOWN, when an outage outlasts --outage-patience.
    this.deadline = new Deadline({
      maxDurationMs: run.maxDurationMs,
      timer: run.deadlineTimer,
      stoppable: true,
      onExpire: (undone) => frontier.halt(undone),
    });

    const counters = this.counters;
    this.archive = new ArchiveSink(work.paths.out, {
      spool: work.spool,
      signal: this.controller.signal,
      // The manifest is the one entry still to come.
      onProgress: (bytes, entries) =>
        this.emit({ type: 'archive-progress', bytes, entries, total: counters.filesAdded + 1 }),
      onBacklog: (behind) => (behind ? frontier.pause() : frontier.resume()),
    });
    void this.archive.written.catch((error: unknown) => frontier.stop(error));
    // The keys are replaced in every body and every text the archive keeps (core/secret-marker.ts).
    const secrets = SecretMarker.of(archive.keys);
    const sink = this.archive;
    this.model = new ArchiveModel(
      work.entries,
      (file) => {
        counters.fileAdded();
        sink.add(file);
      },
      (text) => {
        const clean = redactSecrets(text, archive.keys);
        return secrets ? secrets.redactText(clean) : clean;
      },
    );

    const deadline = this.deadline;
    this.fetch = fetchContext({
      options: http,
      client: this.client,
      spool: work.spool,
      frontier,
      signal: deadline.requestSignal(this.controller.signal),
      counts: counters,
      emit: this.emit,
      now: this.now,
      giveUp: (error) => deadline.stopNow(error),
      secrets,
    });
    this.errorEvent = errorEvents(this.emit, archive.keys);
    // Page requisites are fetched as the crawl stores the pages naming them, and prototypes are
    // made viewable as they are done, not after the crawl.
    this.viewer = new OfflineViewer({
      fetch: this.fetch,
      frontier,
      model: this.model,
      service: { origin: this.client.origin, basePath: this.client.basePath },
      baseUrl: archive.baseUrl,
      pages: archive.pages,
      onFailed: (source, error) => this.failed(source, error),
      onViewReplaced: () => counters.viewReplaced(),
    });
  }

  /** A resource failed for good (already in the manifest): counted, and told as an event. */
  failed(source: string, error: RabbitError): void {
    this.counters.failed(this.deadline.cutOff(error));
    this.errorEvent(source, error);
  }

  /**
   * Runs the stages that fetch (the crawl, the page assets): when one fails, everything in flight
   * is stopped and waited for before the failure goes on, told as an interruption when the caller
   * stopped the run.
   */
  async fetching<T>(stage: () => Promise<T>): Promise<T> {
    try {
      return await stage();
    } catch (error) {
      this.frontier.stop(error);
      this.controller.abort();
      await this.frontier.quiet();
      throw this.stoppedByCaller() && !isRabbitError(error) ? interrupted() : error;
    }
  }

  /** What a failed export throws, once the partial archive is removed and the workspace told why. */
  async failure(error: unknown, keys: readonly string[]): Promise<unknown> {
    await this.archive.fail(error);
    const failure = sanitize(error, keys, this.stoppedByCaller());
    await this.prepared.work.close(isRabbitError(failure, 'INTERRUPTED') ? 'interrupted' : 'failed');
    return failure;
  }

  /** Releases the timer, the listener on the caller's signal, --since's archive and the connections. */
  async close(): Promise<void> {
    this.deadline.cancel();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.prepared.since?.close();
    await Promise.all([this.client.close(), this.viewer.close()]);
  }

  /**
   * Only the caller's signal (Ctrl-C, SIGTERM) makes a failure an interruption: the controller is
   * also aborted to stop everything after a failure, which must then be told as what it was.
   */
  private stoppedByCaller(): boolean {
    return this.callerSignal?.aborted === true;
  }
}

/** The run begins: where it goes, how wide, how much a resumed run brings, and through which proxy. */
export function announceStart(run: ExportRun, http: HttpSettings): void {
  run.emit({
    type: 'start',
    baseUrl: http.baseUrl,
    out: run.prepared.work.paths.out,
    concurrency: http.concurrency,
    resumed: run.prepared.work.resumed?.size ?? 0,
    ...(run.client.proxyHost ? { proxy: run.client.proxyHost } : {}),
  });
}
