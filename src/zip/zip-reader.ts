import { constants, createReadStream } from 'node:fs';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createInflateRaw, crc32, inflateRawSync } from 'node:zlib';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { readAtSync as readAt } from '../core/positional-io.js';
import {
  DirectoryError,
  readDirectoryEnd,
  decodeName,
  scanDirectory,
  type DirectoryEnd,
  type DirectoryRecord,
} from './zip-directory.js';
import { ZipIndex, type NameHash } from './zip-index.js';
import { LOCAL_HEADER_BYTES, LOCAL_SIGNATURE } from './zip-records.js';

export interface ZipEntryInfo {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  crc32: number;
  /** 0 stored, 8 deflated; anything else cannot be read back by this tool. */
  compressionMethod: number;
}

/** A read-only view of the central directory by name, answered from the compact index. */
export interface ZipEntries extends Iterable<[string, ZipEntryInfo]> {
  /** Distinct names. */
  readonly size: number;
  get(name: string): ZipEntryInfo | undefined;
  has(name: string): boolean;
  keys(): IterableIterator<string>;
  values(): IterableIterator<ZipEntryInfo>;
}

export interface ZipReader {
  readonly path: string;
  /** Central directory entries by name; for a repeated name, the first one. Nothing is held per entry. */
  readonly entries: ZipEntries;
  /** Names the central directory lists more than once (a zip we wrote never has any). */
  readonly duplicates: string[];
  /** The compact index behind `entries`, for callers that keep per-entry state by position. */
  readonly index: ZipIndex;
  /** The entry's uncompressed bytes; the stream fails with ARCHIVE_CORRUPT on a bad CRC, size or inflate error. */
  openEntry(name: string | ZipEntryInfo): Promise<Readable>;
  /** The whole entry in memory; refuses entries larger than `maxBytes`. */
  readEntry(name: string, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

export interface OpenZipOptions {
  /** Only for tests: a weak hash makes every lookup go through the collision path. */
  hashName?: NameHash;
  /**
   * The only names the caller will look up (a reader of the manifest alone): they are found in the
   * scan at open, and the index (12 bytes an entry) is built only if anything else is asked for.
   */
  only?: readonly string[];
}

/** readEntry is for small JSON entries; anything past this is not one. */
/** The `reason` of an openZip failure over an entry that is a symlink or device, not a file or folder. */
export const NOT_A_FILE = 'not a regular file';

const DEFAULT_MAX_READ_BYTES = 512 * 1024 * 1024;
/**
 * Entries up to this size, compressed and inflated, are read and inflated in one call: cheaper
 * than a stream for tiny bodies. The call is capped at the declared size plus one byte, so a
 * body that would inflate past what it declares fails at that byte.
 */
const ONE_SHOT_BYTES = 256 * 1024;
/** Name bytes read with a local header at once; a longer name takes a second read. */
const NAME_GUESS = 256;

export type Located = ZipEntryInfo & Pick<DirectoryRecord, 'flags' | 'localHeaderOffset' | 'dataLimit'>;

/**
 * Opens a zip for reading without loading it: the central directory is scanned once into a
 * compact index (zip64 included; or, for a caller that names the few entries it wants, only
 * checked and searched for those), and entry data is streamed on demand with its CRC-32 and size
 * checked, so a damaged entry fails alone.
 */
export async function openZip(path: string, options: OpenZipOptions = {}): Promise<ZipReader> {
  const name = basename(path);
  const noted = new Map<string, DirectoryRecord | null>((options.only ?? []).map((wanted) => [wanted, null]));
  const opened = await openDirectory(path, name, options, noted);
  const { handle, end } = opened;
  let built = opened.index;
  const fd = handle.fd;
  let closed = false;
  const indexOf = (): ZipIndex => {
    // Never from a closed descriptor: its number may belong to another file by now.
    if (closed) throw new Error(`internal: ${name} read after it was closed`);
    return (built ??= new ZipIndex(fd, end, options.hashName));
  };
  const find = (entryName: string): DirectoryRecord | undefined => {
    const seen = noted.get(entryName);
    if (seen !== undefined && built === undefined) return seen ?? undefined;
    const index = indexOf();
    const position = index.find(entryName);
    return position === -1 ? undefined : index.record(position);
  };
  const locate = (wanted: string | ZipEntryInfo): Located | undefined => {
    // Infos this reader handed out carry where the entry is: no second lookup for a caller walking the directory.
    if (typeof wanted !== 'string' && 'localHeaderOffset' in wanted && 'flags' in wanted) return wanted as Located;
    const record = find(typeof wanted === 'string' ? wanted : wanted.name);
    return record === undefined ? undefined : located(record);
  };

  const openEntry = (wanted: string | ZipEntryInfo): Promise<Readable> => {
    const entry = locate(wanted);
    if (entry === undefined) {
      const missing = typeof wanted === 'string' ? wanted : wanted.name;
      return Promise.reject(
        new RabbitError('ARCHIVE_CORRUPT', `${name} has no entry ${missing}`, { data: { archive: path } }),
      );
    }
    return Promise.resolve(Readable.from(entryBytes(fd, path, entry, end.offset), { objectMode: false }));
  };

  const readEntry = async (entryName: string, maxBytes = DEFAULT_MAX_READ_BYTES): Promise<Buffer> => {
    const info = locate(entryName);
    if (info !== undefined && info.uncompressedSize > maxBytes) {
      throw new RabbitError(
        'ARCHIVE_CORRUPT',
        `${entryName} in ${name} claims ${info.uncompressedSize} bytes, more than the ${maxBytes} expected`,
        { data: { archive: path } },
      );
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await openEntry(entryName)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  return {
    path,
    entries: entriesView(indexOf, find),
    get duplicates() {
      return indexOf().duplicates;
    },
    get index() {
      return indexOf();
    },
    openEntry,
    readEntry,
    close: () => {
      // The index (12 bytes an entry) goes with the file: a caller done with a big archive gets
      // that memory back even while it still holds the reader.
      closed = true;
      built = undefined;
      void handle.close().catch(() => undefined);
    },
  };
}

/**
 * The file opened and its central directory found and scanned: into the index, or (with `only`)
 * for the records of the names in `noted`, the first of each. The file is closed again on a failure.
 */
async function openDirectory(
  path: string,
  name: string,
  options: OpenZipOptions,
  noted: Map<string, DirectoryRecord | null>,
): Promise<{ handle: FileHandle; end: DirectoryEnd; index: ZipIndex | undefined }> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO under an archive's name is refused below (not a file), never waited on.
    handle = await openFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw openError(error, path, Buffer.alloc(0));
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile())
      throw Object.assign(new Error('not a file'), { code: stats.isDirectory() ? 'EISDIR' : NOT_REGULAR });
    const end = readDirectoryEnd(handle.fd, stats.size);
    if (options.only === undefined) return { handle, end, index: new ZipIndex(handle.fd, end, options.hashName) };
    // The same scan the index makes (so the same faults are found at open), keeping only the first record of each name asked for.
    for (const record of scanDirectory(handle.fd, end))
      if (noted.get(record.name) === null) noted.set(record.name, record);
    return { handle, end, index: undefined };
  } catch (error) {
    const head = await headOf(handle);
    await handle.close();
    throw openError(error, path, head);
  }
}

function located(record: DirectoryRecord): Located {
  return {
    name: record.name,
    compressedSize: record.compressedSize,
    uncompressedSize: record.uncompressedSize,
    crc32: record.crc32,
    compressionMethod: record.compressionMethod,
    flags: record.flags,
    localHeaderOffset: record.localHeaderOffset,
    ...(record.dataLimit !== undefined ? { dataLimit: record.dataLimit } : {}),
  };
}

function entriesView(indexOf: () => ZipIndex, find: (name: string) => DirectoryRecord | undefined): ZipEntries {
  function* firsts(): Generator<ZipEntryInfo> {
    const index = indexOf();
    for (const { position, record } of index.records()) {
      if (!index.isRepeat(position)) yield located(record);
    }
  }
  const info = (name: string): ZipEntryInfo | undefined => {
    const record = find(name);
    return record === undefined ? undefined : located(record);
  };
  return {
    get size() {
      return indexOf().size;
    },
    get: info,
    has: (name) => find(name) !== undefined,
    *keys() {
      for (const entry of firsts()) yield entry.name;
    },
    values: firsts,
    *[Symbol.iterator]() {
      for (const entry of firsts()) yield [entry.name, entry];
    },
  };
}

/**
 * The entry's bytes, inflated, then checked against the directory's size and CRC-32. The data must
 * lie in the entry's own part of the file (before the next local header, or before the directory
 * when the index has not placed it), and inflating stops at the first byte past the declared size:
 * what an entry costs to read is bounded by what the directory says, whatever its bytes hold.
 */
export async function* entryBytes(fd: number, path: string, entry: Located, directory: number): AsyncGenerator<Buffer> {
  checkMethod(path, entry);
  const start = dataStart(fd, path, entry, directory);
  let crc = 0;
  let size = 0;
  const tooLarge = () =>
    damaged(path, entry, `it inflates to more than its declared ${entry.uncompressedSize} bytes`, 'too-large');
  const counted = (chunk: Buffer): Buffer => {
    crc = crc32(chunk, crc);
    size += chunk.length;
    if (size > entry.uncompressedSize) throw tooLarge();
    return chunk;
  };
  const cap = entry.uncompressedSize + 1;
  try {
    if (entry.compressedSize <= ONE_SHOT_BYTES && entry.uncompressedSize <= ONE_SHOT_BYTES) {
      const raw = readAt(fd, start, entry.compressedSize);
      if (raw.length < entry.compressedSize) throw damaged(path, entry, 'the entry runs past the end of the file');
      yield counted(entry.compressionMethod === 8 ? inflateCapped(raw, cap, tooLarge) : raw);
    } else {
      const source = createReadStream('', {
        fd,
        start,
        end: start + entry.compressedSize - 1,
        autoClose: false,
        highWaterMark: 1 << 16,
      });
      const stream = entry.compressionMethod === 8 ? source.pipe(createInflateRaw({ chunkSize: 1 << 16 })) : source;
      source.once('error', (error) => stream.destroy(error));
      try {
        for await (const chunk of stream) yield counted(chunk as Buffer);
      } finally {
        // Stopped early (a size past the declared one, or a reader that gave up): nothing reads on.
        // The file stream is only paused: destroying it would close the reader's descriptor.
        source.unpipe();
        source.pause();
        if (stream !== source) stream.destroy();
      }
    }
  } catch (error) {
    if (isRabbitError(error)) throw error;
    throw damaged(path, entry, error instanceof Error ? error.message : String(error));
  }
  if (size !== entry.uncompressedSize) throw damaged(path, entry, `${size} bytes instead of ${entry.uncompressedSize}`);
  if (crc >>> 0 !== entry.crc32 >>> 0) throw damaged(path, entry, `CRC-32 ${hex(crc)} instead of ${hex(entry.crc32)}`);
}

/**
 * ARCHIVE_CORRUPT for an entry whose bytes cannot be trusted, with the fault a crafted zip is refused
 * for. Bytes listed twice, or headers that disagree, are no damage a copy suffers: such a zip is
 * `foreign`, not written as it is by any export.
 */
function damaged(path: string, entry: Located, reason: string, fault?: ZipFault): RabbitError {
  const crafted = fault === 'overlap' || fault === 'local-header';
  return new RabbitError('ARCHIVE_CORRUPT', `${entry.name} in ${basename(path)} is damaged: ${reason}`, {
    entry: entry.name,
    reason: `damaged: ${reason}`,
    data: { archive: path, ...(fault !== undefined ? { fault } : {}), ...(crafted ? { foreign: true } : {}) },
  });
}

/** Only stored or deflated, never encrypted; a stored entry's two sizes are one. */
function checkMethod(path: string, entry: Located): void {
  if (entry.flags & 0x1) throw damaged(path, entry, 'it is encrypted');
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    throw damaged(path, entry, `unsupported compression method ${entry.compressionMethod}`);
  if (entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize) {
    throw damaged(
      path,
      entry,
      `compressed/uncompressed size mismatch for stored file: ${entry.compressedSize} != ${entry.uncompressedSize}`,
    );
  }
}

/**
 * Where the entry's data begins, after its local header: the header must lie, with the data, in
 * the entry's own part of the file, and name the entry and its method as the directory does.
 */
function dataStart(fd: number, path: string, entry: Located, directory: number): number {
  const limit = Math.min(entry.dataLimit ?? directory, directory);
  const overlap = () =>
    damaged(path, entry, `its data overlaps ${OVERLAPS} (bytes ${entry.localHeaderOffset} to ${limit})`, 'overlap');
  if (entry.localHeaderOffset + LOCAL_HEADER_BYTES > limit) throw overlap();
  // The header and, in the same read for any usual name, the name it carries.
  let header = readAt(
    fd,
    entry.localHeaderOffset,
    Math.min(LOCAL_HEADER_BYTES + NAME_GUESS, limit - entry.localHeaderOffset),
  );
  if (header.length < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_SIGNATURE)
    throw damaged(path, entry, 'invalid local file header signature');
  const nameLength = header.readUInt16LE(26);
  const start = entry.localHeaderOffset + LOCAL_HEADER_BYTES + nameLength + header.readUInt16LE(28);
  if (start + entry.compressedSize > limit) throw overlap();
  if (header.length < LOCAL_HEADER_BYTES + nameLength)
    header = readAt(fd, entry.localHeaderOffset, LOCAL_HEADER_BYTES + nameLength);
  // Readers that walk the local headers (bsdtar, Java's ZipInputStream, any streaming unzip) take the
  // name and method from there: a zip whose two copies differ extracts there as other files than the
  // directory lists. Refused, as Python's zipfile does, so that what verify passes is one archive to all.
  const local = decodeName(
    header.subarray(LOCAL_HEADER_BYTES, LOCAL_HEADER_BYTES + nameLength),
    header.readUInt16LE(6),
  );
  if (local !== entry.name)
    throw damaged(path, entry, 'its local header names another entry than the zip’s directory does', 'local-header');
  if (header.readUInt16LE(8) !== entry.compressionMethod)
    throw damaged(
      path,
      entry,
      'its local header gives another compression method than the zip’s directory does',
      'local-header',
    );
  return start;
}

/**
 * The faults a crafted zip is refused for, in the error's `data.fault`: its data shared with another
 * entry or the directory, more bytes than it declares, or a local header that disagrees with the
 * directory.
 */
export type ZipFault = 'overlap' | 'too-large' | 'local-header';

const OVERLAPS = "another entry's or the table of contents: the zip lists the same bytes twice";

/** One inflate call that stops at `cap` bytes of output (zlib's maxOutputLength) instead of allocating what the data says. */
function inflateCapped(raw: Buffer, cap: number, tooLarge: () => RabbitError): Buffer {
  try {
    return inflateRawSync(raw, { maxOutputLength: cap });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw error;
  }
}

function hex(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

async function headOf(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(4);
  const { bytesRead } = await handle.read(buffer, 0, 4, 0).catch(() => ({ bytesRead: 0 }));
  return buffer.subarray(0, bytesRead);
}

/** The open's own code for a path that is neither a file nor a folder (a FIFO, a device, a socket). */
const NOT_REGULAR = 'NOT_REGULAR';

/**
 * Tells a missing file, an empty file, a cut-short zip, a non-zip and a damaged directory apart. The
 * path goes in the data of those a fresh copy may mend, for the next step (cli/damaged-archive.ts),
 * with `foreign` for an entry no export writes.
 */
function openError(error: unknown, path: string, head: Buffer): RabbitError {
  const name = basename(path);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new RabbitError('NOT_A_ZIP', `${name} does not exist`, { cause: error });
  if (code === 'EISDIR')
    return new RabbitError('NOT_A_ZIP', `${name} is a folder, not a zip archive`, { cause: error });
  if (code === NOT_REGULAR)
    return new RabbitError('NOT_A_ZIP', `${name} is not a regular file (a pipe, device or socket), not a zip archive`, {
      cause: error,
    });
  if (code !== undefined) return new RabbitError('NOT_A_ZIP', `${name} cannot be read (${code})`, { cause: error });
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof DirectoryError && error.notAFile && error.unsafeName !== undefined) {
    // Extracted, such an entry becomes a link or device rather than the data the manifest lists.
    return new RabbitError(
      'ARCHIVE_CORRUPT',
      `${name} holds an entry ${JSON.stringify(error.unsafeName)} that is ${error.message}, not a regular file or folder; refusing to read it`,
      { cause: error, entry: error.unsafeName, reason: NOT_A_FILE, data: { archive: path, foreign: true } },
    );
  }
  if (error instanceof DirectoryError && error.unsafeName !== undefined) {
    // `entry` set on an openZip failure means the directory names a path that could escape the extract folder.
    return new RabbitError(
      'ARCHIVE_CORRUPT',
      `${name} holds an entry with an unsafe name ${JSON.stringify(error.unsafeName)}; refusing to read it`,
      { cause: error, entry: error.unsafeName, reason: 'unsafe name', data: { archive: path, foreign: true } },
    );
  }
  if (!(error instanceof DirectoryError && error.noEndRecord)) {
    return new RabbitError('ARCHIVE_CORRUPT', `${name} has a damaged table of contents: ${reason}`, {
      cause: error,
      data: { archive: path },
    });
  }
  const zipStart = head.length === 4 && head.readUInt32LE(0) === LOCAL_SIGNATURE;
  if (head.length === 0 || zipStart) {
    // A copy that never got its first byte, or lost its last ones: copied again, it reads.
    const message = zipStart
      ? `${name} is a zip archive whose end is missing or damaged (no end of central directory record where it belongs): the download or copy was probably cut short, or bytes were added after it`
      : `${name} is empty (0 bytes), not a zip archive`;
    return new RabbitError('NOT_A_ZIP', message, { cause: error, data: { archive: path } });
  }
  return new RabbitError(
    'NOT_A_ZIP',
    `${name} is not a zip archive (no zip signature at its start or end); it may be another kind of file`,
    { cause: error },
  );
}
