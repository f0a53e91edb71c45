import { createHash, randomInt } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { TOOL_VERSION } from '../core/version.js';
import { HttpClient, parseBaseUrl } from '../client/http-client.js';
import { AdaptiveConcurrency } from '../client/adaptive-concurrency.js';
import { RateLimiter } from '../client/rate-limiter.js';
import { RETRY_DEFAULTS, type RetryPolicy } from '../client/retry-policy.js';
import { Spool } from '../storage/spool.js';
import { AccountCrawler, DEFAULT_SIZE_CAPS, JOURNAL_ORIGIN, type BodyCache, type CrawlHooks, type Format, type SizeCaps } from '../crawl/crawl-account.js';
import { Frontier } from '../crawl/frontier.js';
import { writeZip, type WriteZipResult, type ZipSource } from '../archive/zip-writer.js';
import { EntryChannel } from './entry-channel.js';
import type { Manifest } from '../manifest/types.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import { ArchiveModel, type StoredFile } from '../manifest/archive-model.js';
import { addOfflineViewer } from '../viewer/build-viewer.js';
import type { EventSink } from './events.js';
import { acquireLock } from '../storage/lock.js';
import { JournalCache, JournalWriter, readJournal } from '../storage/journal.js';
import { openSinceCache, type SinceCache } from './since-cache.js';
import { previousCosts } from '../manifest/previous-costs.js';
import { checkOutput, makeWorkDir, outputPaths, removeStaleTemps, removeWorkDir } from '../storage/work-dir.js';

export interface ExportOptions {
  out: string;
  baseUrl: string;
  /** One or more API keys; each prototype is read with the first key that lists it. */
  keys: readonly string[];
  concurrency?: number;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  maxRps?: number;
  caps?: Partial<SizeCaps>;
  formats?: ReadonlySet<Format>;
  prototypes?: ReadonlySet<string>;
  /** An earlier archive (export --since): unchanged prototypes are copied from it, not fetched. */
  since?: string;
  force?: boolean;
  signal?: AbortSignal;
  onEvent?: EventSink;
  dispatcher?: Dispatcher;
  now?: () => number;
  random?: () => number;
}

export const EXPORT_DEFAULTS = {
  concurrency: 8,
  timeoutMs: 60_000,
  formats: new Set<Format>(['json', 'html', 'png']) as ReadonlySet<Format>,
} as const;

export interface ExportResult {
  out: string;
  complete: boolean;
  manifest: Manifest;
  archiveBytes: number;
  peakInFlight: number;
}

/**
 * Exports everything the keys can read into one zip at `options.out`. Bodies stream to a work
 * directory beside the output as they arrive; the zip is assembled from there into a temp file and
 * renamed into place only when it is whole. Resource failures end up in `manifest.errors`
 * (complete: false); fatal ones throw a RabbitError and leave nothing at `out`.
 */
export async function exportAccount(options: ExportOptions): Promise<ExportResult> {
  if (options.keys.length === 0) throw new RabbitError('NO_API_KEY', 'no API key given');
  parseBaseUrl(options.baseUrl);
  const concurrency = options.concurrency ?? EXPORT_DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new RabbitError('USAGE', '--concurrency must be a whole number from 1 to 256');
  }
  const now = options.now ?? Date.now;
  const emit: EventSink = options.onEvent ?? (() => undefined);
  const secrets = options.keys;
  const startedAt = new Date(now()).toISOString();
  const paths = outputPaths(options.out);

  await checkOutput(paths, options.force ?? false);
  const hadWorkDir = await makeWorkDir(paths);
  await removeStaleTemps(paths);
  const lock = await acquireLock(join(paths.work, 'lock'), `the output ${paths.out}`);
  const controller = new AbortController();
  // Every request in flight and every backoff listens on this one signal.
  setMaxListeners(0, controller.signal);
  const abort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) abort();

  const spool = new Spool(join(paths.work, 'spool'));
  const journalPath = join(paths.work, 'journal.jsonl');
  const saved = await readJournal(journalPath, options.baseUrl);
  const journal = await JournalWriter.open(journalPath, options.baseUrl, saved.records.size === 0);
  const journalCache = new JournalCache(saved, spool);
  const caches: BodyCache[] = journalCache.size > 0 ? [journalCache] : [];
  const client = new HttpClient({
    baseUrl: options.baseUrl,
    connections: concurrency,
    timeoutMs: options.timeoutMs ?? EXPORT_DEFAULTS.timeoutMs,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const frontier = new Frontier({ concurrency });
  // The zip is written while the crawl runs: each body goes in as soon as it is stored, so
  // writing the archive costs little time after the last response. manifest.json comes last.
  const entries = new EntryChannel<StoredFile | ManifestSource>();
  const model = new ArchiveModel((file) => entries.push(file));
  const stats = { requests: 0, retries: 0, bytes: 0, files: 0 };
  const adaptive = new AdaptiveConcurrency(concurrency, (value) => {
    frontier.concurrency = value;
    emit({ type: 'concurrency', value });
  }, now);

  let keepWorkDir = hadWorkDir;
  let zipping: Promise<WriteZipResult> | undefined;
  // export --since (issue 4): asked after this output's own journal, which is newer.
  let since: SinceCache | undefined;
  try {
    await spool.init();
    zipping = writeZip(zipEntries(entries, spool), paths.out, {
      signal: controller.signal,
      onProgress: (bytes, written) => emit({ type: 'archive-progress', bytes, entries: written, total: model.fileCount + 1 }),
    });
    // A zip that cannot be written (disk full) ends the crawl now rather than after it; the
    // error itself is rethrown where the writer is awaited.
    zipping.catch((error: unknown) => frontier.stop(error));
    if (options.since !== undefined) {
      since = await openSinceCache(options.since, spool, { baseUrl: options.baseUrl });
      caches.push(since);
      // progress (issue 15): what each prototype cost last time; a hint only, never a failure.
      const costs = await previousCosts(options.since).catch(() => undefined);
      if (costs) emit({ type: 'previous', prototypes: costs });
    }
    if (saved.setAside) emit({ type: 'journal-set-aside', reason: saved.setAside });
    emit({ type: 'start', baseUrl: options.baseUrl, out: paths.out, concurrency, resumed: journalCache.size });
    emit({ type: 'phase', phase: 'crawl' });
    const hooks: CrawlHooks = {
      prototype: (proto, name) => emit({ type: 'prototype', id: proto.id, name, revision: proto.revision }),
      stored: (file, proto, reusedFrom) => {
        if (!proto) return;
        model.noteOrigin(proto.id, file.path, reusedFrom === JOURNAL_ORIGIN ? undefined : reusedFrom);
        if (reusedFrom !== JOURNAL_ORIGIN) journal.record(file, proto, reusedFrom);
        if (reusedFrom !== undefined) emit({ type: 'reused', source: file.source, bytes: file.size }); // progress (issue 15)
      },
      listed: (ids) => emit({ type: 'prototypes-listed', ids }), // progress (issue 15)
      pagesListed: (id, count) => emit({ type: 'pages-listed', id, count }), // progress (issue 15)
      prototypeDone: (id) => emit({ type: 'prototype-done', id }), // progress (issue 15)
      failed: (source, error) => emit({ type: 'error', error: { source, code: error.code, message: redactSecrets(error.message, secrets) } }),
    };
    const crawler = new AccountCrawler({
      fetch: {
        client,
        spool,
        retry: { ...RETRY_DEFAULTS, ...options.retry },
        signal: controller.signal,
        random: options.random ?? (() => randomInt(0, 2 ** 32) / 2 ** 32),
        now,
        adaptive,
        ...(options.maxRps ? { rateLimiter: new RateLimiter(options.maxRps, now) } : {}),
        onAttempt: (event) => {
          if (event.type === 'response') {
            stats.requests++;
            stats.bytes += event.bytes;
            emit({ type: 'response', source: event.source, status: event.status, bytes: event.bytes, queued: frontier.queued, inFlight: frontier.running });
          } else {
            stats.retries++;
            emit({ type: 'retry', source: event.source, attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
          }
        },
      },
      frontier,
      model,
      keys: options.keys,
      caps: { ...DEFAULT_SIZE_CAPS, ...options.caps },
      formats: options.formats ?? EXPORT_DEFAULTS.formats,
      ...(options.prototypes ? { only: options.prototypes } : {}),
      ...(caches.length > 0 ? { cache: firstCandidate(caches) } : {}),
      hooks,
    });
    controller.signal.addEventListener('abort', () => frontier.stop(interrupted()), { once: true });
    try {
      await crawler.start();
      await frontier.drain();
      emit({ type: 'phase', phase: 'requisites' }); // progress (issue 15)
      // Offline viewer (issue 5): page assets, viewable page copies and index.html (src/viewer/).
      await addOfflineViewer({
        fetch: crawler.fetchContext, frontier, model, service: { origin: client.origin, basePath: client.basePath },
        baseUrl: options.baseUrl, pages: (options.formats ?? EXPORT_DEFAULTS.formats).has('html'), onFailed: hooks.failed,
      });
    } catch (error) {
      frontier.stop(error);
      controller.abort();
      await frontier.quiet();
      throw controller.signal.aborted && !isRabbitError(error) ? interrupted() : error;
    }

    emit({ type: 'phase', phase: 'archive' });
    for (const error of model.errors) error.message = redactSecrets(error.message, secrets);
    stats.files = model.fileCount;
    const manifest = model.toManifest({
      toolVersion: TOOL_VERSION,
      baseUrl: options.baseUrl,
      startedAt,
      finishedAt: new Date(now()).toISOString(),
      stats,
    });
    entries.push({ manifest });
    entries.close();
    const written = await zipping;
    keepWorkDir = false;
    emit({ type: 'phase', phase: 'done' });
    return { out: paths.out, complete: manifest.complete, manifest, archiveBytes: written.bytes, peakInFlight: frontier.peakRunning };
  } catch (error) {
    entries.fail(error);
    await zipping?.catch(() => undefined);
    const failure = sanitize(error, secrets, controller.signal.aborted);
    // An interrupted run keeps what it saved for the next run; any other failure cleans up.
    if (isRabbitError(failure, 'INTERRUPTED')) keepWorkDir = true;
    throw failure;
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await journal.close();
    await spool.close();
    since?.close();
    await client.close();
    await lock.release();
    if (!keepWorkDir) await removeWorkDir(paths);
  }
}

/** Several caches asked in order; the first with a candidate answers. */
function firstCandidate(caches: readonly BodyCache[]): BodyCache {
  return {
    async lookup(source, proto) {
      for (const cache of caches) {
        const candidate = await cache.lookup(source, proto);
        if (candidate) return candidate;
      }
      return undefined;
    },
  };
}

interface ManifestSource {
  manifest: Manifest;
}

/**
 * The zip's entries, pulled one at a time by the writer as the crawl stores them. Small bodies are
 * read whole and checked against their sha256 on the way (a spool file damaged since it was
 * written must not reach the archive); they go in as data, which archiver writes faster than a
 * file per entry.
 */
async function* zipEntries(entries: AsyncIterable<StoredFile | ManifestSource>, spool: Spool): AsyncGenerator<ZipSource> {
  for await (const file of entries) {
    if ('manifest' in file) {
      yield { name: MANIFEST_PATH, data: `${JSON.stringify(file.manifest, null, 2)}\n`, store: false };
      continue;
    }
    const base = { name: file.path, store: isStoredAsIs(file), ...entryDate(file.lastModified) };
    if (file.offset === undefined && file.size > INLINE_ENTRY_BYTES) {
      yield { ...base, file: file.file };
      continue;
    }
    const data = await spool.read(file);
    if (createHash('sha256').update(data).digest('hex') !== file.sha256) {
      throw new RabbitError('ARCHIVE_CORRUPT', `the saved body of ${file.source} was damaged on disk before it could be archived; run the export again`);
    }
    yield { ...base, data };
  }
}

/** Entries up to this size are read whole and verified while the archive is written. */
const INLINE_ENTRY_BYTES = 1024 * 1024;

/** PNG is already compressed: store it as served rather than deflate it again. */
function isStoredAsIs(file: StoredFile): boolean {
  return file.contentType.startsWith('image/png') || file.path.endsWith('.png');
}

function entryDate(lastModified: string | null): { date?: Date } {
  if (!lastModified) return {};
  const ms = Date.parse(lastModified);
  // Zip dates start in 1980; anything earlier (or unparseable) keeps the writer's fixed default.
  return Number.isNaN(ms) || ms < Date.UTC(1980, 0, 2) ? {} : { date: new Date(ms) };
}

function interrupted(): RabbitError {
  return new RabbitError('INTERRUPTED', 'the export was interrupted');
}

/** Whatever escapes carries no key: messages are scrubbed of every key and api_key parameter. */
function sanitize(error: unknown, secrets: readonly string[], aborted: boolean): unknown {
  if (aborted && !(isRabbitError(error) && error.errorClass === 'fatal' && error.code !== 'INTERRUPTED')) {
    return interrupted();
  }
  if (error instanceof Error) error.message = redactSecrets(error.message, secrets);
  return error;
}
