import { RabbitError } from '../core/errors.js';
import { parseBaseUrl } from '../client/base-url.js';
import { DEFAULT_SIZE_CAPS, type Format, type SizeCaps } from '../crawl/crawl-account.js';
import type { EventSink } from './events.js';
import type { DeadlineTimer } from './deadline.js';
import { EXPORT_DEFAULTS } from './export-defaults.js';
import type { SessionSettings } from '../client/service-session.js';
import type { ExportOptions, Transport } from './export-options.js';

/**
 * How requests reach the service and how hard they press it: the settings its service session is
 * opened with, the transport decided. The retry, stall and outage policies stay partial: the
 * client's defaults complete them.
 */
export type HttpSettings = Readonly<Omit<SessionSettings, 'transport'> & { transport: Transport }>;

/** What the crawl walks and keeps. */
export interface CrawlSettings {
  readonly keys: readonly string[];
  readonly caps: Readonly<SizeCaps>;
  readonly formats: ReadonlySet<Format>;
  /** Only these prototype ids (`--prototype`), when given. */
  readonly only?: ReadonlySet<string>;
  readonly firstContactMs: number;
}

/** Where the archive goes, what it is built from and what it must never hold. */
export interface ArchiveSettings {
  readonly out: string;
  readonly baseUrl: string;
  /** Replace a journal left by a run with other options (see storage/workspace.ts). */
  readonly force: boolean;
  /** An earlier archive whose unchanged prototypes are copied, not fetched. */
  readonly since?: string;
  /** Replaced in every body and every message the archive keeps. */
  readonly keys: readonly string[];
  /** Whether page renderings are kept: the offline viewer then fetches their assets and makes viewable copies. */
  readonly pages: boolean;
}

/** The run as a whole: its clock, how it is stopped and whom it tells. */
export interface RunSettings {
  readonly now: () => number;
  readonly emit: EventSink;
  /** The caller's signal (Ctrl-C, SIGTERM): what makes a failure an interruption. */
  readonly signal?: AbortSignal;
  readonly maxDurationMs?: number;
  readonly deadlineTimer?: DeadlineTimer;
}

/** An export's options resolved once, defaults applied; each part of the run is given only its section. */
export interface ExportSettings {
  readonly http: HttpSettings;
  readonly crawl: CrawlSettings;
  readonly archive: ArchiveSettings;
  readonly run: RunSettings;
}

/**
 * The options (from the CLI or a program) checked and completed, before anything touches the disk
 * or the network. The one place an export's defaults are filled in.
 */
export function resolveExportSettings(options: ExportOptions): ExportSettings {
  if (options.keys.length === 0) throw new RabbitError('NO_API_KEY', 'no API key given');
  const transport: Transport = Object.freeze({
    ...(options.proxy ? { proxy: options.proxy } : {}),
    allowInsecureHttp: options.allowInsecureHttp ?? false,
  });
  parseBaseUrl(options.baseUrl, transport);
  const concurrency = options.concurrency ?? EXPORT_DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new RabbitError('USAGE', '--concurrency must be a whole number from 1 to 256');
  }
  const keys = Object.freeze([...options.keys]);
  const formats = options.formats ?? EXPORT_DEFAULTS.formats;
  return Object.freeze({
    http: Object.freeze({
      baseUrl: options.baseUrl,
      keys,
      concurrency,
      timeoutMs: options.timeoutMs ?? EXPORT_DEFAULTS.timeoutMs,
      transport,
      ...defined({
        dispatcher: options.dispatcher,
        retry: options.retry,
        maxRps: options.maxRps,
        stall: options.stall,
        outage: options.outage,
        outagePatienceMs: options.outagePatienceMs,
        sleep: options.sleep,
        random: options.random,
        timer: options.timer,
      }),
    }),
    crawl: Object.freeze({
      keys,
      caps: Object.freeze({ ...DEFAULT_SIZE_CAPS, ...options.caps }),
      formats,
      firstContactMs: options.firstContactMs ?? EXPORT_DEFAULTS.firstContactMs,
      ...defined({ only: options.prototypes }),
    }),
    archive: Object.freeze({
      out: options.out,
      baseUrl: options.baseUrl,
      force: options.force ?? false,
      keys,
      pages: formats.has('html'),
      ...defined({ since: options.since }),
    }),
    run: Object.freeze({
      now: options.now ?? Date.now,
      emit: options.onEvent ?? (() => undefined),
      ...defined({
        signal: options.signal,
        maxDurationMs: options.maxDurationMs,
        deadlineTimer: options.deadlineTimer,
      }),
    }),
  });
}

/** The fields given a value: an optional setting left out stays absent, not present as undefined. */
function defined<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
