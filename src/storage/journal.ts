import { createHash } from 'node:crypto';
import { open, readFile, rename, stat, type FileHandle } from 'node:fs/promises';
import type { BodyRef, Spool } from './spool.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from './body-cache.js';
import type { StoredFile } from '../manifest/archive-model.js';

/**
 * The progress of one export, appended as it goes to a file in the work directory, so that running
 * the same command again after Ctrl-C, kill -9 or a power cut fetches only what was not yet saved.
 *
 * One JSON object per line. A line is written only after its body is complete in the spool; the
 * body is re-hashed before it is reused, so a torn last line, a lost spool file or a flipped byte
 * costs a request, never a wrong archive. A journal written for another service, or in a format
 * this version does not know, is set aside unread.
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
}

export interface JournalState {
  /** Usable records, by prototype then source. */
  records: Map<string, Map<string, FileRecord>>;
  /** Why an existing journal was not used, if it was not. */
  setAside?: string;
}

/** Reads the journal left by an earlier run; anything doubtful is set aside, never trusted. */
export async function readJournal(path: string, baseUrl: string): Promise<JournalState> {
  const records = new Map<string, Map<string, FileRecord>>();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { records };
  }
  const lines = text.split('\n');
  const header = parseLine(lines[0] ?? '') as Partial<Header> | undefined;
  if (header?.t !== 'header' || header.v !== JOURNAL_VERSION || header.baseUrl !== baseUrl) {
    const reason = header?.t !== 'header' ? 'it has no valid header' : header.v !== JOURNAL_VERSION ? 'it is from another version' : 'it was written for another service URL';
    await rename(path, `${path}.set-aside`).catch(() => undefined);
    return { records, setAside: reason };
  }
  for (const line of lines.slice(1)) {
    const record = parseLine(line) as Partial<FileRecord> | undefined;
    // A torn last line (power cut mid-write) ends the usable part.
    if (!record) break;
    if (!isFileRecord(record)) continue;
    let byProto = records.get(record.proto);
    if (!byProto) records.set(record.proto, (byProto = new Map()));
    byProto.set(record.source, record);
  }
  return { records };
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

  private constructor(private readonly handle: FileHandle) {}

  static async open(path: string, baseUrl: string, fresh: boolean): Promise<JournalWriter> {
    const handle = await open(path, fresh ? 'w' : 'a');
    const writer = new JournalWriter(handle);
    if (fresh || (await stat(path)).size === 0) writer.append({ t: 'header', v: JOURNAL_VERSION, baseUrl });
    // Written every WRITE_INTERVAL_MS (a killed process loses nothing the kernel has), forced to
    // disk every SYNC_INTERVAL_MS (a power cut loses at most that).
    let ticks = 0;
    writer.timer = setInterval(() => writer.flush(++ticks % (SYNC_INTERVAL_MS / WRITE_INTERVAL_MS) === 0), WRITE_INTERVAL_MS);
    writer.timer.unref();
    return writer;
  }

  record(file: StoredFile, proto: PrototypeContext, from?: string): void {
    const record: FileRecord = {
      t: 'file',
      proto: proto.id,
      rev: proto.revision,
      lm: proto.lastModification,
      source: file.source,
      sha256: file.sha256,
      size: file.size,
      ...(file.offset !== undefined ? { offset: file.offset } : {}),
      contentType: file.contentType,
      lastModified: file.lastModified,
      ...(from !== undefined ? { from } : {}),
    };
    this.append(record);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.flush(true);
    await this.chain;
    await this.handle.close().catch(() => undefined);
  }

  private append(value: Header | FileRecord): void {
    this.pending += `${JSON.stringify(value)}\n`;
    if (this.pending.length >= BATCH_BYTES) this.flush(false);
  }

  private flush(sync: boolean): void {
    if (this.failure) return;
    if (this.pending) {
      const batch = this.pending;
      this.pending = '';
      this.unsynced = true;
      this.chain = this.chain.then(() => this.handle.write(batch));
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

/** Bodies saved by an earlier run, reusable while their prototype has not changed since. */
export class JournalCache implements BodyCache {
  constructor(
    private readonly state: JournalState,
    private readonly spool: Pick<Spool, 'pathOf' | 'packPath' | 'read'>,
  ) {}

  get size(): number {
    let count = 0;
    for (const byProto of this.state.records.values()) count += byProto.size;
    return count;
  }

  async lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
    const record = this.state.records.get(proto.id)?.get(source);
    if (!record || record.rev !== proto.revision || record.lm !== proto.lastModification) return undefined;
    const ref: BodyRef =
      record.offset === undefined
        ? { file: this.spool.pathOf(record.sha256), size: record.size }
        : { file: this.spool.packPath, offset: record.offset, size: record.size };
    return {
      fresh: true,
      lastModified: record.lastModified,
      ...(record.from !== undefined ? { origin: record.from } : {}),
      load: async (): Promise<CachedBody> => {
        const data = await this.spool.read(ref);
        if (createHash('sha256').update(data).digest('hex') !== record.sha256) throw new Error(`spool copy of ${source} is damaged`);
        return { ...ref, sha256: record.sha256, contentType: record.contentType, lastModified: record.lastModified };
      },
    };
  }
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
    typeof value.source === 'string' &&
    typeof value.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(value.sha256) &&
    typeof value.size === 'number' &&
    typeof value.rev === 'number' &&
    (value.lm === null || typeof value.lm === 'number') &&
    (value.offset === undefined || (Number.isSafeInteger(value.offset) && value.offset >= 0)) &&
    typeof value.contentType === 'string'
  );
}
