import { open, type FileHandle } from 'node:fs/promises';
import { BatchedFile } from '../zip/batched-file.js';
import type { FileEntry } from '../manifest/types.js';
import { FILE_ENTRY_MEMBERS } from '../storage/file-entry.js';

/**
 * What a manifest says of the entries of its zip, filed by zip index position: the records go to
 * a file, and memory keeps where each one starts, four bytes an entry (eight once the file passes
 * 4 GiB). The path is not stored: the caller found the position from it and passes it back.
 */
export class ListedEntries {
  /** 1 + the record's offset in the file, by zip position; 0 for an entry with no record. */
  private starts: Uint32Array | Float64Array;
  private readonly file: BatchedFile;

  private constructor(
    private readonly handle: FileHandle,
    positions: number,
  ) {
    this.starts = new Uint32Array(positions);
    this.file = new BatchedFile(handle);
  }

  static async create(path: string, positions: number): Promise<ListedEntries> {
    return new ListedEntries(await open(path, 'w+'), positions);
  }

  has(position: number): boolean {
    return (this.starts[position] ?? 0) !== 0;
  }

  /** Files the entry's record under `position`; a record too long to be a real one is not filed. */
  async add(position: number, entry: FileEntry): Promise<void> {
    const served = Buffer.from(JSON.stringify(FILED.map((member) => entry[member.name] ?? null)), 'utf8');
    const length = HEADER_BYTES + served.length;
    if (length > MAX_RECORD_BYTES) return;
    const start = this.file.size + 1;
    if (start > 0xffffffff && this.starts instanceof Uint32Array) this.starts = Float64Array.from(this.starts);
    await this.file.put(length, (target, at) => {
      target.writeUInt32LE(length, at);
      target.write(entry.sha256, at + 4, SHA256_BYTES, 'hex');
      served.copy(target, at + HEADER_BYTES);
    });
    this.starts[position] = start;
  }

  /** The entry filed under `position`, with the path it was found by. */
  async get(position: number, path: string): Promise<FileEntry> {
    const start = (this.starts[position] ?? 0) - 1;
    if (start < 0) throw new RangeError(`no entry filed at position ${position}`);
    let record = await this.file.readAt(start, READ_BYTES);
    const length = record.readUInt32LE(0);
    if (length > record.length) record = await this.file.readAt(start, length);
    const values = JSON.parse(record.toString('utf8', HEADER_BYTES, length)) as unknown[];
    const entry: Record<string, unknown> = { path, sha256: record.toString('hex', 4, HEADER_BYTES) };
    FILED.forEach((member, i) => {
      const value = values[i] ?? null;
      if (value !== null || member.required) entry[member.name] = value;
    });
    return entry as unknown as FileEntry;
  }

  /** Writes what is pending; reading works before as well, this only bounds what memory holds. */
  async flush(): Promise<void> {
    await this.file.flush();
  }

  /** Closes the file and lets go of the offsets (four bytes an entry): nothing can be read after. */
  async close(): Promise<void> {
    this.starts = new Uint32Array(0);
    await this.handle.close().catch(() => undefined);
  }
}

const SHA256_BYTES = 32;
/** The members filed as JSON, in the entry's order; the path is the key and the sha256 is filed in binary. */
const FILED = FILE_ENTRY_MEMBERS.filter((member) => member.name !== 'path' && member.name !== 'sha256');
/** Record length (u32) and the binary sha256, then the JSON array of the FILED members' values (null for an absent one). */
const HEADER_BYTES = 4 + SHA256_BYTES;
/** One read covers a record of ordinary lengths; a longer one takes a second read. */
const READ_BYTES = 512;
/** Sources, content types and dates are short; a record past this is not from an archive of ours. */
const MAX_RECORD_BYTES = 64 * 1024;
