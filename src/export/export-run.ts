import { setMaxListeners } from 'node:events';
import { isRabbitError, type RabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { SecretMarker } from '../core/secret-marker.js';
import { HttpClient } from '../client/http-client.js';
import { openServiceSession, type ServiceSession } from '../client/service-session.js';
import type { FetchContext } from '../crawl/fetch-resource.js';
import { Frontier } from '../crawl/frontier.js';
import { ArchiveModel } from '../manifest/archive-model.js';
import { ArchiveSink } from '../archive/archive-sink.js';
import { OfflineViewer } from '../site/build-viewer.js';
import { Deadline } from './deadline.js';
import type { EventSink } from './events.js';
import type { ArchiveSettings, ExportSettings, HttpSettings, RunSettings } from './export-settings.js';
import { errorEvents, fetchContext, frontierLimiter } from './fetch-setup.js';
import { interrupted, sanitize } from './failure.js';
import type { PreparedWorkspace } from './prepare-workspace.js';
import { RunCounters } from './run-counters.js';

/**
 * The parts of one export, made once in the order they depend on each other: the frontier
 * requests queue on, the stop (the caller's signal, --max-duration, an outage past its patience),
 * the service session, the zip and its manifest, how each request is made, and the offline viewer.
 * The stages of exportAccount use them; `close` releases them whatever happened.
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
  private readonly session: ServiceSession;
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
    this.emit = run.emit;
    this.now = run.now;
    this.callerSignal = run.signal;
    this.followCaller();
    this.frontier = this.openFrontier(http);
    this.deadline = this.openDeadline(run);
    this.session = openServiceSession(http, {
      signal: this.deadline.requestSignal(this.controller.signal),
      now: this.now,
      limiter: frontierLimiter(this.frontier, this.emit),
      onOutage: (event) => this.emit({ type: 'outage', ...event }),
      giveUp: (error) => this.deadline.stopNow(error),
    });
    this.client = this.session.client;
    this.archive = this.openArchiveSink();
    // The keys are replaced in every body and every text the archive keeps (core/secret-marker.ts).
    const secrets = SecretMarker.of(archive.keys);
    this.model = this.archiveModel(archive.keys, secrets);
    const { spool } = prepared.work;
    this.fetch = fetchContext({
      session: this.session,
      spool,
      frontier: this.frontier,
      counts: this.counters,
      emit: this.emit,
      secrets,
    });
    this.errorEvent = errorEvents(this.emit, archive.keys);
    this.viewer = this.offlineViewer(archive);
  }

  /** Ctrl-C, SIGTERM: the caller's signal aborts the run's own. */
  private followCaller(): void {
    setMaxListeners(0, this.controller.signal);
    this.callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (this.callerSignal?.aborted) this.onCallerAbort();
  }

  /** The one limiter of the run's requests, sized for the client the session makes. */
  private openFrontier(http: HttpSettings): Frontier {
    const frontier = new Frontier({ concurrency: http.concurrency, ahead: HttpClient.queueAheadFor(http.dispatcher) });
    this.controller.signal.addEventListener('abort', () => frontier.stop(interrupted()), { once: true });
    return frontier;
  }

  /**
   * At --max-duration nothing new starts and requests in flight end with DEADLINE; so too, with
   * SERVICE_DOWN, when an outage outlasts --outage-patience, and with KEY_REFUSED when every key is.
   */
  private openDeadline(run: RunSettings): Deadline {
    const frontier = this.frontier;
    return new Deadline({
      maxDurationMs: run.maxDurationMs,
      timer: run.deadlineTimer,
      stoppable: true,
      onExpire: (undone) => frontier.halt(undone),
    });
  }

  /** The zip being written: its progress told, and the frontier paused while it falls behind. */
  private openArchiveSink(): ArchiveSink {
    const { frontier, counters } = this;
    const { work } = this.prepared;
    const sink = new ArchiveSink(work.paths.out, {
      spool: work.spool,
      signal: this.controller.signal,
      // The manifest is the one entry still to come.
      onProgress: (bytes, entries) =>
        this.emit({ type: 'archive-progress', bytes, entries, total: counters.filesAdded + 1 }),
      onBacklog: (behind) => (behind ? frontier.pause() : frontier.resume()),
    });
    void sink.written.catch((error: unknown) => frontier.stop(error));
    return sink;
  }

  /** The manifest's model: each file counted and handed to the zip, each text it keeps without a key. */
  private archiveModel(keys: readonly string[], secrets: SecretMarker | undefined): ArchiveModel {
    const { counters, archive: sink } = this;
    return new ArchiveModel(
      this.prepared.work.entries,
      (file) => {
        counters.fileAdded();
        sink.add(file);
      },
      (text) => {
        const clean = redactSecrets(text, keys);
        return secrets ? secrets.redactText(clean) : clean;
      },
    );
  }

  /**
   * Page requisites are fetched as the crawl stores the pages naming them, and prototypes are made
   * viewable as they are done, not after the crawl.
   */
  private offlineViewer(archive: ArchiveSettings): OfflineViewer {
    const counters = this.counters;
    return new OfflineViewer({
      fetch: this.fetch,
      frontier: this.frontier,
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

  /** Releases the timer, the listener on the caller's signal, --since's archive and the service session. */
  async close(): Promise<void> {
    this.deadline.cancel();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.prepared.since?.close();
    await Promise.all([this.session.close(), this.viewer.close()]);
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
