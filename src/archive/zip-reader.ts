import { open as openFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable, TransformCallback } from 'node:stream';
import { Transform } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { RabbitError, isRabbitError } from '../core/errors.js';

export interface ZipEntryInfo {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  crc32: number;
  /** 0 stored, 8 deflated; anything else cannot be read back by this tool. */
  compressionMethod: number;
}

export interface ZipReader {
  readonly path: string;
  /** Central directory entries by name; for a repeated name, the first one. */
  readonly entries: Map<string, ZipEntryInfo>;
  /** Names the central directory lists more than once (a zip we wrote never has any). */
  readonly duplicates: string[];
  /** The entry's uncompressed bytes; the stream fails with ARCHIVE_CORRUPT on a bad CRC or inflate error. */
  openEntry(name: string): Promise<Readable>;
  /** The whole entry in memory; refuses entries larger than `maxBytes`. */
  readEntry(name: string, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

/** readEntry is for small JSON entries such as the manifest; anything past this is not one. */
const DEFAULT_MAX_READ_BYTES = 512 * 1024 * 1024;

const LOCAL_HEADER_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Errors raised because the central directory names an entry that could escape the extract folder. */
const unsafeNameErrors = new WeakMap<RabbitError, string>();

/** The entry name behind an `openZip` failure caused by an unsafe name (`../x`, `/etc/x`, `a\b`). */
export function unsafeNameOf(error: unknown): string | undefined {
  return isRabbitError(error) ? unsafeNameErrors.get(error) : undefined;
}

/**
 * Opens a zip for reading without loading it: only the central directory is read, one record at a
 * time, and entry data is streamed on demand. yauzl checks sizes but not CRCs, so the streams
 * handed out here check the CRC-32 themselves.
 */
export async function openZip(path: string): Promise<ZipReader> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      validateEntrySizes: true,
      // Backslashes would otherwise be turned into slashes silently, hiding a foreign name.
      strictFileNames: true,
    });
  } catch (error) {
    throw await openError(error, path);
  }

  const entries = new Map<string, ZipEntryInfo>();
  const raw = new Map<string, Entry>();
  const duplicates: string[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      if (raw.has(entry.fileName)) {
        duplicates.push(entry.fileName);
        continue;
      }
      raw.set(entry.fileName, entry);
      entries.set(entry.fileName, {
        name: entry.fileName,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        crc32: entry.crc32,
        compressionMethod: entry.compressionMethod,
      });
    }
  } catch (error) {
    zip.close();
    throw directoryError(error, path);
  }

  const openEntry = async (name: string): Promise<Readable> => {
    const entry = raw.get(name);
    if (entry === undefined) throw new RabbitError('ARCHIVE_CORRUPT', `${basename(path)} has no entry ${name}`);
    let stream: Readable;
    try {
      stream = await zip.openReadStreamPromise(entry);
    } catch (error) {
      throw corrupt(path, name, error);
    }
    return checkCrc(stream, entry, path);
  };

  const readEntry = async (name: string, maxBytes = DEFAULT_MAX_READ_BYTES): Promise<Buffer> => {
    const info = entries.get(name);
    if (info !== undefined && info.uncompressedSize > maxBytes) {
      throw new RabbitError(
        'ARCHIVE_CORRUPT',
        `${name} in ${basename(path)} claims ${info.uncompressedSize} bytes, more than the ${maxBytes} expected`,
      );
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await openEntry(name)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  return { path, entries, duplicates, openEntry, readEntry, close: () => zip.close() };
}

/** Passes the entry's bytes through and fails at the end if they do not match the stored CRC-32. */
function checkCrc(source: Readable, entry: Entry, path: string): Readable {
  let crc = 0;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      crc = crc32(chunk, crc);
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      if (crc >>> 0 === entry.crc32 >>> 0) return callback();
      callback(
        new RabbitError(
          'ARCHIVE_CORRUPT',
          `${entry.fileName} in ${basename(path)} is damaged: CRC-32 ${hex(crc)} instead of ${hex(entry.crc32)}`,
        ),
      );
    },
    destroy(error, callback) {
      // yauzl asks for unpipe before destroy, or the fd may be released while still in use.
      source.unpipe(checked);
      source.destroy();
      callback(error);
    },
  });
  source.once('error', (error) => checked.destroy(corrupt(path, entry.fileName, error)));
  return source.pipe(checked);
}

function hex(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

function corrupt(path: string, name: string, error: unknown): RabbitError {
  if (isRabbitError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RabbitError('ARCHIVE_CORRUPT', `${name} in ${basename(path)} is damaged: ${reason}`, { cause: error });
}

function directoryError(error: unknown, path: string): RabbitError {
  const reason = error instanceof Error ? error.message : String(error);
  const unsafe = /^(?:invalid relative path|absolute path|invalid characters in fileName): (.*)$/s.exec(reason);
  if (unsafe) {
    const name = unsafe[1] ?? '';
    const wrapped = new RabbitError(
      'ARCHIVE_CORRUPT',
      `${basename(path)} holds an entry with an unsafe name ${JSON.stringify(name)}; refusing to read it`,
      { cause: error },
    );
    unsafeNameErrors.set(wrapped, name);
    return wrapped;
  }
  return new RabbitError('ARCHIVE_CORRUPT', `${basename(path)} has a damaged table of contents: ${reason}`, {
    cause: error,
  });
}

/** Tells a missing file, an empty file, a cut-short zip and a non-zip apart, in one line each. */
async function openError(error: unknown, path: string): Promise<RabbitError> {
  const name = basename(path);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new RabbitError('NOT_A_ZIP', `${name} does not exist`, { cause: error });
  if (code === 'EISDIR') return new RabbitError('NOT_A_ZIP', `${name} is a folder, not a zip archive`, { cause: error });
  if (code !== undefined) {
    return new RabbitError('NOT_A_ZIP', `${name} cannot be read (${code})`, { cause: error });
  }
  const reason = error instanceof Error ? error.message : String(error);
  if (!/end of central directory record signature not found/i.test(reason)) {
    return new RabbitError('ARCHIVE_CORRUPT', `${name} is a damaged zip archive: ${reason}`, { cause: error });
  }
  const head = await firstBytes(path, LOCAL_HEADER_SIGNATURE.length);
  const message =
    head.length === 0
      ? `${name} is empty (0 bytes), not a zip archive`
      : head.equals(LOCAL_HEADER_SIGNATURE)
        ? `${name} is a zip archive that was cut short (no end of central directory record); the download or copy was probably interrupted`
        : `${name} is not a zip archive (no zip signature at its start or end); it may be another kind of file`;
  return new RabbitError('NOT_A_ZIP', message, { cause: error });
}

async function firstBytes(path: string, count: number): Promise<Buffer> {
  const handle = await openFile(path, 'r');
  try {
    const buffer = Buffer.alloc(count);
    const { bytesRead } = await handle.read(buffer, 0, count, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
