import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, stat, type FileHandle } from 'node:fs/promises';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from '../crawl/crawl-account.js';
import type { StoredFile } from './archive-model.js';

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
  contentType: string;
  lastModified: string | null;
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

/** Appends records; lines reach the disk within SYNC_INTERVAL_MS and on close. */
export class JournalWriter {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private failure: unknown;

  private constructor(private readonly handle: FileHandle) {}

  static async open(path: string, baseUrl: string, fresh: boolean): Promise<JournalWriter> {
    const handle = await open(path, fresh ? 'w' : 'a');
    const writer = new JournalWriter(handle);
    if (fresh || (await stat(path)).size === 0) writer.append({ t: 'header', v: JOURNAL_VERSION, baseUrl });
    writer.timer = setInterval(() => writer.sync(), SYNC_INTERVAL_MS);
    writer.timer.unref();
    return writer;
  }

  record(file: StoredFile, proto: PrototypeContext): void {
    const record: FileRecord = {
      t: 'file',
      proto: proto.id,
      rev: proto.revision,
      lm: proto.lastModification,
      source: file.source,
      sha256: file.sha256,
      size: file.size,
      contentType: file.contentType,
      lastModified: file.lastModified,
    };
    this.append(record);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.sync();
    await this.chain;
    await this.handle.close().catch(() => undefined);
  }

  private append(value: Header | FileRecord): void {
    const line = `${JSON.stringify(value)}\n`;
    this.dirty = true;
    this.chain = this.chain.then(() => this.handle.write(line)).catch((error: unknown) => {
      // The journal only saves work for a later run; failing to write it must not fail this one.
      this.failure ??= error;
    });
  }

  private sync(): void {
    if (!this.dirty || this.failure) return;
    this.dirty = false;
    this.chain = this.chain.then(() => this.handle.datasync()).catch(() => undefined);
  }
}

/** Bodies saved by an earlier run, reusable while their prototype has not changed since. */
export class JournalCache implements BodyCache {
  constructor(
    private readonly state: JournalState,
    private readonly spoolPath: (sha256: string) => string,
  ) {}

  get size(): number {
    let count = 0;
    for (const byProto of this.state.records.values()) count += byProto.size;
    return count;
  }

  async lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
    const record = this.state.records.get(proto.id)?.get(source);
    if (!record || record.rev !== proto.revision || record.lm !== proto.lastModification) return undefined;
    const file = this.spoolPath(record.sha256);
    return {
      fresh: true,
      lastModified: record.lastModified,
      load: async (): Promise<CachedBody> => {
        if ((await sha256Of(file)) !== record.sha256) throw new Error(`spool copy of ${source} is damaged`);
        return { sha256: record.sha256, size: record.size, file, contentType: record.contentType, lastModified: record.lastModified };
      },
    };
  }
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
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
    typeof value.contentType === 'string'
  );
}
