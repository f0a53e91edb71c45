import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import type { Spool } from './spool.js';
import { readAt, whole } from '../core/positional-io.js';
import { addSpan, newlineChunks, readSpanLines } from './keyed-spill.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from './body-cache.js';
import type { StoredFile } from './stored-file.js';
import { hasServedMembers, pushServedMembers } from './file-entry.js';
import { readVerified } from './read-verified.js';
import { jsonNumber, jsonString } from '../core/json-text.js';
import { isRabbitError } from '../core/errors.js';
import { closedOnFailure, openOwnFile, openOwnFileIfAny } from '../core/private-files.js';

/**
 * The progress of one export, appended as it goes to a file in the work directory, so that running
 * the same command again after Ctrl-C, kill -9 or a power cut fetches only what was not yet saved.
 *
 * One JSON object per line. A line is written only after its body is written to the spool (a
 * killed process loses no body the journal names); the body is re-hashed before it is reused, so
 * a torn last line, a lost spool file or a flipped byte costs a request, never a wrong archive. A
 * journal written for another service, or in a format this version does not know, is set aside
 * unread.
 */
const JOURNAL_VERSION = 1;
/** How often appended lines are forced to disk: a power cut loses at most this much work. */
const SYNC_INTERVAL_MS = 1_000;
const WRITE_INTERVAL_MS = 100;
/** Lines are written in batches of about this size, or every WRITE_INTERVAL_MS. */
const BATCH_BYTES = 64 * 1024;

interface Header {
  t: 'header';
  v: number;
  baseUrl: string;
}

interface FileRecord {
  t: 'file';
  proto: string;
  rev: number;
  lm: number | null;
  source: string;
  sha256: string;
  size: number;
  /** Offset in the spool's pack file; absent for a body in a file of its own (named by sha256). */
  offset?: number;
  contentType: string;
  lastModified: string | null;
  /** The earlier archive the body was copied from (export --since), so a resumed run says so too. */
  from?: string;
  keyRedactions?: number;
  fetchedAt?: string;
}

/**
 * A body's record as one line: the JSON of a FileRecord, in its member order, joined from its
 * pieces (see core/json-text.ts); one is written for every body a run stores.
 */
function recordLine(file: StoredFile, proto: PrototypeContext, from: string | undefined): string {
  const parts = [
    '{"t":"file","proto":',
    jsonString(proto.id),
    ',"rev":',
    jsonNumber(proto.revision),
    ',"lm":',
    jsonNumber(proto.lastModification),
  ];
  pushServedMembers(parts, file);
  if (file.offset !== undefined) parts.push(',"offset":', jsonNumber(file.offset));
  if (from !== undefined) parts.push(',"from":', jsonString(from));
  parts.push('}');
  return parts.join('');
}

export interface JournalState {
  path: string;
  /** Where each prototype's usable records are: byte offset and length pairs in the journal. */
  spans: Map<string, number[]>;
  /** How many usable records there are. */
  records: number;
  /** Why an existing journal was not used, if it was not. */
  setAside?: string;
}

/**
 * Indexes the journal left by an earlier run: which byte ranges hold each prototype's records, not
 * the records themselves (a million-resource run leaves a journal of hundreds of megabytes).
 * Anything doubtful is set aside, never trusted.
 */
export async function readJournal(path: string, baseUrl: string): Promise<JournalState> {
  const state: JournalState = { path, spans: new Map(), records: 0 };
  let handle: FileHandle | undefined;
  try {
    // A journal that is not the user's own is refused, not read: it decides which bodies are trusted.
    handle = await openOwnFileIfAny(path, 'the journal');
  } catch (error) {
    if (isRabbitError(error)) throw error;
  }
  if (handle === undefined) return state;
  try {
    let header: Partial<Header> | undefined;
    for await (const { line, offset } of linesOf(handle, path)) {
      if (header === undefined) {
        header = (parseLine(line) as Partial<Header> | undefined) ?? {};
        if (header.t !== 'header' || header.v !== JOURNAL_VERSION || header.baseUrl !== baseUrl) break;
        continue;
      }
      const record = parseLine(line) as Partial<FileRecord> | undefined;
      // A torn last line (power cut mid-write) ends the usable part.
      if (!record) break;
      if (!isFileRecord(record)) continue;
      state.records++;
      const spans = state.spans.get(record.proto) ?? [];
      addSpan(spans, offset, Buffer.byteLength(line) + 1);
      state.spans.set(record.proto, spans);
    }
    if (header !== undefined && (header.t !== 'header' || header.v !== JOURNAL_VERSION || header.baseUrl !== baseUrl)) {
      const reason =
        header.t !== 'header'
          ? 'it has no valid header'
          : header.v !== JOURNAL_VERSION
            ? 'it is from another version'
            : 'it was written for another service URL';
      await handle.close();
      await rename(path, `${path}.set-aside`).catch(() => undefined);
      return { path, spans: new Map(), records: 0, setAside: reason };
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
  return state;
}

/** The lines of a file with the byte offset each starts at; a last line without its newline is left out. */
async function* linesOf(handle: FileHandle, path: string): AsyncGenerator<{ line: string; offset: number }> {
  for await (const { data, offset } of newlineChunks(handle, 0, (await handle.stat()).size, path)) {
    for (let start = 0, nl = data.indexOf(10); nl !== -1; start = nl + 1, nl = data.indexOf(10, start)) {
      yield { line: data.toString('utf8', start, nl), offset: offset + start };
    }
  }
}

/**
 * Appends records. Lines are gathered and written a batch at a time (one write per batch, not per
 * body, keeps the file system out of the crawl's way); whatever a crash loses, the next run simply
 * fetches again.
 */
export class JournalWriter {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private pending = '';
  private unsynced = false;
  private failure: unknown;

  private constructor(
    private readonly handle: FileHandle,
    private readonly spool: Pick<Spool, 'written'>,
  ) {}

  /** `spool` holds the bodies the records name: a batch of lines waits until their bodies are written. */
  static async open(
    path: string,
    baseUrl: string,
    fresh: boolean,
    spool: Pick<Spool, 'written'>,
  ): Promise<JournalWriter> {
    const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = constants;
    const flags = fresh ? O_WRONLY | O_CREAT | O_TRUNC : O_RDWR | O_APPEND | O_CREAT;
    const handle = await openOwnFile(path, flags, 'the journal');
    const writer = new JournalWriter(handle, spool);
    await closedOnFailure(handle, async () => {
      const size = fresh ? 0 : (await handle.stat()).size;
      if (size === 0) writer.append(JSON.stringify({ t: 'header', v: JOURNAL_VERSION, baseUrl } satisfies Header));
      // A line torn by a kill must not swallow the first record appended after it.
      else if (whole(await readAt(handle, size - 1, 1), 1, path, size - 1)[0] !== 10) writer.pending = '\n';
    });
    // Written every WRITE_INTERVAL_MS (a killed process loses nothing the kernel has), forced to
    // disk every SYNC_INTERVAL_MS (a power cut loses at most that).
    let ticks = 0;
    writer.timer = setInterval(
      () => writer.flush(++ticks % (SYNC_INTERVAL_MS / WRITE_INTERVAL_MS) === 0),
      WRITE_INTERVAL_MS,
    );
    writer.timer.unref();
    return writer;
  }

  record(file: StoredFile, proto: PrototypeContext, from?: string): void {
    this.append(recordLine(file, proto, from));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.flush(true);
    await this.chain;
    await this.handle.close().catch(() => undefined);
  }

  private append(line: string): void {
    this.pending += `${line}\n`;
    if (this.pending.length >= BATCH_BYTES) this.flush(false);
  }

  private flush(sync: boolean): void {
    if (this.failure) return;
    if (this.pending) {
      const batch = this.pending;
      this.pending = '';
      this.unsynced = true;
      // The spool's own batches may still be in memory: they go first, or a kill between the two
      // writes would leave lines naming bodies that are not there (fetched again, at a cost).
      this.chain = this.chain.then(async () => {
        await this.spool.written();
        await this.handle.write(batch);
      });
    }
    if (sync && this.unsynced) {
      this.unsynced = false;
      this.chain = this.chain.then(() => this.handle.datasync());
    }
    this.chain = this.chain.catch((error: unknown) => {
      // The journal only saves work for a later run; failing to write it must not fail this one.
      this.failure ??= error;
    });
  }
}

/**
 * Bodies saved by an earlier run, reusable while their prototype has not changed since. A
 * prototype's records are read from the journal when it is first asked about and kept while the
 * crawl is on it: a few prototypes at a time, not the whole journal.
 */
export class JournalCache implements BodyCache {
  private readonly loaded = new Map<string, Promise<Map<string, FileRecord>>>();

  constructor(
    private readonly state: JournalState,
    private readonly spool: Pick<Spool, 'refOf' | 'read'>,
  ) {}

  get size(): number {
    return this.state.records;
  }

  async lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
    const record = (await this.recordsOf(proto.id))?.get(source);
    if (!record || record.rev !== proto.revision || record.lm !== proto.lastModification) return undefined;
    const ref = this.spool.refOf(record);
    return {
      fresh: true,
      lastModified: record.lastModified,
      size: ref.size,
      ...(record.from !== undefined ? { origin: record.from } : {}),
      load: async (): Promise<CachedBody> => {
        await readVerified(
          this.spool.read(ref),
          { size: ref.size, sha256: record.sha256 },
          `spool copy of ${source} is damaged`,
          { source },
        );
        return {
          ...ref,
          sha256: record.sha256,
          contentType: record.contentType,
          lastModified: record.lastModified,
          ...(record.keyRedactions ? { keyRedactions: record.keyRedactions } : {}),
          ...(record.fetchedAt !== undefined ? { fetchedAt: record.fetchedAt } : {}),
        };
      },
    };
  }

  private recordsOf(proto: string): Promise<Map<string, FileRecord>> | undefined {
    const spans = this.state.spans.get(proto);
    if (!spans) return undefined;
    let records = this.loaded.get(proto);
    if (records) {
      // Most recently used last, so the oldest is the first to go.
      this.loaded.delete(proto);
      this.loaded.set(proto, records);
      return records;
    }
    records = loadRecords(this.state.path, spans);
    this.loaded.set(proto, records);
    if (this.loaded.size > CACHED_PROTOTYPES) this.loaded.delete(this.loaded.keys().next().value as string);
    return records;
  }
}

/** Prototypes whose journal records are kept in memory at once (the crawl works on a few at a time). */
const CACHED_PROTOTYPES = 8;

async function loadRecords(path: string, spans: readonly number[]): Promise<Map<string, FileRecord>> {
  const records = new Map<string, FileRecord>();
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    for (const line of await readSpanLines(handle, spans, path)) {
      const record = parseLine(line) as Partial<FileRecord> | undefined;
      if (record && isFileRecord(record)) records.set(record.source, record);
    }
  } finally {
    await handle.close();
  }
  return records;
}

function parseLine(line: string): unknown {
  if (line.trim() === '') return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

function isFileRecord(value: Partial<FileRecord>): value is FileRecord {
  return (
    value.t === 'file' &&
    typeof value.proto === 'string' &&
    typeof value.rev === 'number' &&
    (value.lm === null || typeof value.lm === 'number') &&
    (value.offset === undefined || (Number.isSafeInteger(value.offset) && value.offset >= 0)) &&
    hasServedMembers(value)
  );
}
