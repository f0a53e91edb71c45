import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { HttpClient } from '../client/http-client.js';
import { RateLimiter } from '../client/rate-limiter.js';
import type { ServiceOptions } from '../client/service-options.js';
import { openServiceSession, sessionSettingsOf, type ServiceSession } from '../client/service-session.js';
import { fetchResource, type FetchContext } from '../crawl/fetch-resource.js';
import { Frontier } from '../crawl/frontier.js';
import { DEFAULT_SIZE_CAPS, type BodyKind } from '../crawl/obtain-body.js';
import { Deadline, type DeadlineTimer } from '../export/deadline.js';
import { EXPORT_DEFAULTS } from '../export/export-defaults.js';
import { fetchContext, frontierLimiter, type AttemptCounts } from '../export/fetch-setup.js';
import { formatDuration } from '../core/duration.js';
import { Spool } from '../storage/spool.js';
import type { RunStats } from '../manifest/types.js';

/** How the check reaches the service (export's options, read the same way, with export's defaults) and its budget. */
export interface LiveClientOptions extends ServiceOptions {
  /** Requests sent at most (retries count, an outage's probes and a key's check do not). */
  maxRequests?: number;
  maxDurationMs?: number;
  /** The timer --max-duration runs on (tests pass their own). */
  deadlineTimer?: DeadlineTimer;
}

/** What one request for a body came to. */
export type LiveAnswer =
  | { type: 'body'; sha256: string; size: number; buffer: Buffer | undefined }
  | { type: 'gone'; status: number }
  /** Not checked: the run stopped (a budget, every key refused, an outage past its patience). */
  | { type: 'stopped' }
  | { type: 'failed'; error: RabbitError };

/** Why the check stopped before it was done: a budget the user set, or the service. */
export type StopReason = 'max-requests' | 'max-duration' | 'KEY_REFUSED' | 'SERVICE_DOWN';

/**
 * Export's way of reading the service, for reading it alone: the same service session
 * (client/service-session.ts: retries with Retry-After, adaptive concurrency, outage pause, key
 * watch) at export's defaults, one frontier, and a request budget as the rate limiter's first
 * step. Bodies pass through a spool in a temp folder, removed at `close`.
 */
export class LiveClient implements AttemptCounts {
  readonly frontier: Frontier;
  /** Requests, retries and bytes read, for the report. */
  readonly stats: RunStats = { requests: 0, retries: 0, bytes: 0, files: 0 };
  private readonly session: ServiceSession;
  private readonly deadline: Deadline;
  private readonly controller = new AbortController();
  private stop: StopReason | undefined;
  private fetch!: FetchContext;
  private spool!: Spool;
  private folder = '';

  retried(): void {
    this.stats.retries++;
  }

  answered(bytes: number): void {
    this.stats.requests++;
    this.stats.bytes += bytes;
  }

  private constructor(private readonly options: LiveClientOptions) {
    setMaxListeners(0, this.controller.signal);
    const settings = sessionSettingsOf(options, EXPORT_DEFAULTS);
    const frontier = new Frontier({
      concurrency: settings.concurrency,
      ahead: HttpClient.queueAheadFor(settings.dispatcher),
    });
    this.frontier = frontier;
    this.deadline = new Deadline({
      maxDurationMs: options.maxDurationMs,
      onExpire: () => frontier.halt(),
      timer: options.deadlineTimer,
      stoppable: true,
    });
    this.session = openServiceSession(settings, {
      signal: this.deadline.requestSignal(this.controller.signal),
      now: options.now ?? Date.now,
      limiter: frontierLimiter(frontier, () => undefined),
      giveUp: (error) => this.halt(error.code === 'KEY_REFUSED' ? 'KEY_REFUSED' : 'SERVICE_DOWN', error),
    });
  }

  static async open(options: LiveClientOptions): Promise<LiveClient> {
    if (options.keys.length === 0) throw new RabbitError('NO_API_KEY', 'no API key given');
    const live = new LiveClient(options);
    try {
      live.folder = await mkdtemp(join(tmpdir(), 'rabbit-verify-live-'));
      live.spool = new Spool(live.folder);
      await live.spool.init();
    } catch (error) {
      await live.session.close();
      throw error;
    }
    const abort = (): void => live.controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    const context = fetchContext({
      session: live.session,
      spool: live.spool,
      frontier: live.frontier,
      counts: live,
      emit: () => undefined,
    });
    const budget = new RequestBudget(options.maxRequests, context.rateLimiter, () =>
      live.halt(
        'max-requests',
        new RabbitError('DEADLINE', `the check reached --max-requests ${options.maxRequests ?? 0}`, {
          errorClass: 'resource',
        }),
      ),
    );
    live.fetch = { ...context, rateLimiter: budget };
    return live;
  }

  /** Why the check stopped early, if it did: --max-duration's clock counts too. */
  get stoppedBy(): StopReason | undefined {
    if (this.stop === undefined && this.deadline.reached) this.stop = 'max-duration';
    return this.stop;
  }

  get keysRefused(): number[] {
    return (this.fetch.keys?.refused ?? []).map((refusal) => refusal.keyNumber);
  }

  get outages(): { count: number; totalMs: number; gaveUp: boolean } {
    return this.fetch.outage?.summary() ?? { count: 0, totalMs: 0, gaveUp: false };
  }

  /** The duration limit, as the user wrote it, for messages. */
  get maxDuration(): string | undefined {
    return this.options.maxDurationMs === undefined ? undefined : formatDuration(this.options.maxDurationMs);
  }

  /** One body from the service, as export reads it; `keep` holds it in memory (JSON to compare). */
  async get(source: string, key: string, kind: BodyKind): Promise<LiveAnswer> {
    if (this.frontier.halted || this.deadline.expired) return { type: 'stopped' };
    if (this.fetch.keys?.refusalOf(key)) return { type: 'stopped' };
    const caps = { ...DEFAULT_SIZE_CAPS, ...this.options.caps };
    try {
      const answer = await fetchResource(this.fetch, { source, key, maxBytes: caps[kind], keep: kind === 'json' });
      if (answer.status !== 200) throw new RabbitError('HTTP_STATUS', `GET ${source} answered 304 unasked`, { source });
      return { type: 'body', sha256: answer.body.sha256, size: answer.body.size, buffer: answer.body.buffer };
    } catch (error) {
      if (!isRabbitError(error)) throw error;
      if (error.code === 'INTERRUPTED' || error.errorClass === 'fatal') throw error;
      if (error.code === 'HTTP_STATUS' && (error.status === 404 || error.status === 410))
        return { type: 'gone', status: error.status };
      if (this.deadline.expired || (error.code === 'KEY_REFUSED' && this.fetch.keys?.refusalOf(key)))
        return { type: 'stopped' };
      return { type: 'failed', error };
    }
  }

  async close(): Promise<void> {
    this.deadline.cancel();
    await this.session.close();
    await this.spool.close().catch(() => undefined);
    await rm(this.folder, { recursive: true, force: true });
  }

  private halt(reason: StopReason, error: RabbitError): void {
    this.stop ??= reason;
    this.deadline.stopNow(error);
  }
}

/**
 * --max-requests as the first step of every attempt (rate-limiter.ts is where fetchResource asks
 * before each one): past the budget the run is halted and the attempt is not sent. --max-rps, when
 * set, still spaces the requests that are sent.
 */
class RequestBudget extends RateLimiter {
  private spent = 0;

  constructor(
    private readonly max: number | undefined,
    private readonly pace: RateLimiter | undefined,
    private readonly exhausted: () => void,
  ) {
    super(1);
  }

  override async take(signal?: AbortSignal): Promise<void> {
    if (this.max !== undefined && this.spent >= this.max) {
      this.exhausted();
      throw new RabbitError('DEADLINE', 'the request budget is spent', { errorClass: 'resource' });
    }
    this.spent++;
    await this.pace?.take(signal);
  }
}
