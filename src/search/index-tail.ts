import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { RabbitError } from '../core/errors.js';
import { readAtSync } from '../core/positional-io.js';
import { parseRecord, readDirectoryEnd, type DirectoryEnd, type DirectoryRecord } from '../zip/zip-directory.js';
import { entryBytes } from '../zip/zip-reader.js';
import { CENTRAL_HEADER_BYTES, CENTRAL_SIGNATURE } from '../zip/zip-records.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import { SEARCH_DIR, SEARCH_PARTS_PATH } from './search-record.js';

/** The first window of the directory read from its end; doubled while the index's records run on. */
const FIRST_WINDOW = 256 * 1024;
/** Past this much of the directory the tail is not worth walking: the whole directory is read instead. */
const MAX_WINDOW = 64 * 1024 * 1024;
/** A record's fixed header and its three fields of up to 65,535 bytes each. */
const MAX_RECORD_BYTES = CENTRAL_HEADER_BYTES + 3 * 0xffff;
/** Records after the index's (index.html, the manifest) that may come before its first one. */
const MAX_RECORDS_AFTER = 16;

/**
 * The search index's entries, found from the end of the zip's central directory without reading
 * the rest of it. The export writes them last but for index.html and the manifest, so at a million
 * entries they are in the directory's last few hundred kilobytes, where scanning the whole of it
 * (as opening the zip does) takes seconds before the first part could be read.
 *
 * Records are walked backwards: the last ends where the directory does, and each before it ends
 * where the next begins (its length is in its own fixed header). The walk stops at the first
 * record before the index's. What it finds is read like any entry (zip-reader.ts entryBytes): CRC,
 * sizes, and data that must lie before the directory are checked there, so a zip crafted to mislead
 * the walk leads search only to other bytes of its own, never past them. Nor to the same bytes
 * twice: each entry's data must end where the next entry the walk found begins (placeData).
 *
 * The manifest's record, when it is among the records after the index's (where the export writes
 * it), is kept beside them: search reads the manifest's head through it before it trusts the index.
 */
export class IndexTail {
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
    private readonly end: DirectoryEnd,
    private readonly records: ReadonlyMap<string, DirectoryRecord>,
  ) {}

  /** The index's entries, or undefined when the tail holds no parts list (no index, or not a zip this walk can read). */
  static async open(path: string): Promise<IndexTail | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      const stats = await handle.stat();
      const end = stats.isFile() ? readDirectoryEnd(handle.fd, stats.size) : undefined;
      const records = end && tailRecords(handle.fd, end);
      if (end && records?.has(SEARCH_PARTS_PATH)) return new IndexTail(handle, path, end, placeData(records, end));
    } catch {
      // A damaged directory: the ordinary open says what is wrong with it.
    }
    await handle.close();
    return undefined;
  }

  has(name: string): boolean {
    return this.records.has(name);
  }

  /** The entry's bytes as they are checked; ARCHIVE_CORRUPT when absent or damaged. */
  openEntry(name: string): Readable {
    const record = this.records.get(name);
    if (record === undefined || this.closed)
      throw new RabbitError('ARCHIVE_CORRUPT', `the search index has no entry ${name}`, {
        data: { archive: this.path },
      });
    return Readable.from(entryBytes(this.handle.fd, this.path, record, this.end.offset), { objectMode: false });
  }

  async readEntry(name: string, maxBytes: number): Promise<Buffer> {
    const record = this.records.get(name);
    if (record !== undefined && record.uncompressedSize > maxBytes)
      throw new RabbitError('ARCHIVE_CORRUPT', `${name} claims ${record.uncompressedSize} bytes, more than expected`, {
        data: { archive: this.path },
      });
    const chunks: Buffer[] = [];
    for await (const chunk of this.openEntry(name)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  close(): void {
    this.closed = true;
    void this.handle.close().catch(() => undefined);
  }
}

/**
 * The records of `search/` from the directory's tail, by name (the first of a repeated name, as the
 * zip reader takes it), and the manifest's when it is among the records after them; no `search/`
 * record when none comes within MAX_RECORDS_AFTER of the end.
 */
export function tailRecords(fd: number, end: DirectoryEnd): Map<string, DirectoryRecord> {
  const stop = end.offset + end.size;
  for (let window = Math.min(FIRST_WINDOW, end.size); ; window = Math.min(window * 2, end.size)) {
    const start = stop - window;
    const walked = walkBack(readAtSync(fd, start, window), start, start === end.offset, end.count);
    if (walked !== undefined) return walked;
    if (window >= end.size || window * 2 > MAX_WINDOW) return new Map();
  }
}

/**
 * Sets where each entry's data must end, as the zip index does for the whole directory
 * (zip-index.ts dataLimits) but over the entries found: the next greater local header offset among
 * them, or the directory. Parts that share a local header (one deflated part listed under a
 * thousand names, each inflating again) keep it for the first in directory order only; the others
 * get their own offset, so none of their data fits and reading them fails as an overlap.
 */
function placeData(records: Map<string, DirectoryRecord>, end: DirectoryEnd): Map<string, DirectoryRecord> {
  const ordered = [...records.values()].sort(
    (a, b) => a.localHeaderOffset - b.localHeaderOffset || a.recordOffset - b.recordOffset,
  );
  let next = end.offset;
  for (let k = ordered.length - 1; k >= 0;) {
    const start = (ordered[k] as DirectoryRecord).localHeaderOffset;
    let first = k;
    while (first > 0 && (ordered[first - 1] as DirectoryRecord).localHeaderOffset === start) first--;
    for (let j = first + 1; j <= k; j++) (ordered[j] as DirectoryRecord).dataLimit = start;
    (ordered[first] as DirectoryRecord).dataLimit = Math.min(next, end.offset);
    next = start;
    k = first - 1;
  }
  return records;
}

/**
 * Walks `buffer` (the directory's last bytes, from `offset` in the file) back from its end: the
 * records found, or undefined when the index's records run on past the buffer's start (unless
 * `whole`, the buffer being the whole directory). Of the records after the index's, the manifest's
 * is kept: search reads its head before it trusts the index (search-archive.ts).
 */
function walkBack(
  buffer: Buffer,
  offset: number,
  whole: boolean,
  count: number,
): Map<string, DirectoryRecord> | undefined {
  const found = new Map<string, DirectoryRecord>();
  let manifest: DirectoryRecord | undefined;
  const withManifest = () => (manifest === undefined ? found : found.set(MANIFEST_PATH, manifest));
  let boundary = buffer.length;
  let after = 0;
  for (let walked = 0; walked < count && boundary > 0; walked++) {
    const at = recordEndingAt(buffer, boundary);
    if (at === -1) return whole ? withManifest() : undefined;
    const record = parseRecord(buffer, at, offset + at);
    if (typeof record === 'number') return undefined;
    if (record.name.startsWith(SEARCH_DIR)) found.set(record.name, record);
    else if (found.size > 0 || ++after > MAX_RECORDS_AFTER) return withManifest();
    // Walking back, the last one kept of a repeated name is its first in the directory.
    else if (record.name === MANIFEST_PATH) manifest = record;
    boundary = at;
  }
  return withManifest();
}

/** The start of the record that ends exactly at `boundary`: the nearest signature whose lengths reach it. */
function recordEndingAt(buffer: Buffer, boundary: number): number {
  for (let at = boundary - CENTRAL_HEADER_BYTES; at >= Math.max(0, boundary - MAX_RECORD_BYTES); at--) {
    if (buffer.readUInt32LE(at) !== CENTRAL_SIGNATURE) continue;
    const length =
      CENTRAL_HEADER_BYTES + buffer.readUInt16LE(at + 28) + buffer.readUInt16LE(at + 30) + buffer.readUInt16LE(at + 32);
    if (at + length === boundary) return at;
  }
  return -1;
}
