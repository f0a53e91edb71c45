import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { ZipArchive } from 'archiver';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { assertSafeRelative } from './paths.js';

export interface ZipSource {
  /** Entry name inside the zip; must pass `assertSafeRelative`. */
  name: string;
  /** Path of a file on disk whose bytes become the entry; opened only when its turn comes. */
  file?: string;
  /** The entry's bytes when they are already in memory (small bodies, the manifest). */
  data?: Buffer | string;
  /** True to store without compression (PNG: already compressed, and byte offsets stay simple). */
  store: boolean;
  date?: Date;
}

export interface WriteZipOptions {
  signal?: AbortSignal;
  /** Called after each entry with the archive bytes produced and the entries written so far. */
  onProgress?(bytes: number, entries: number): void;
}

export interface WriteZipResult {
  bytes: number;
  entries: number;
}

/**
 * Entry date when the caller gives none. A fixed date, not "now": rebuilding an archive from the
 * same entries must give the same bytes, so a checksum of the zip means something.
 */
export const DEFAULT_ENTRY_DATE = new Date(Date.UTC(2000, 0, 1, 0, 0, 0));

/** zlib level 6: zlib's own default, most of level 9's ratio at a fraction of its time. */
const DEFLATE_LEVEL = 6;

/**
 * Writes the entries into a zip at `destPath`, atomically: the zip is built in a temp file beside
 * the destination, fsynced and renamed over it, so `destPath` is either the old file or a
 * complete archive, never a torn one.
 *
 * Entries are appended one at a time and the next source is pulled only after the previous one has
 * been consumed, so at most one file is open and memory does not grow with the archive.
 */
export async function writeZip(
  entries: Iterable<ZipSource> | AsyncIterable<ZipSource>,
  destPath: string,
  options: WriteZipOptions = {},
): Promise<WriteZipResult> {
  const { signal, onProgress } = options;
  const target = resolve(destPath);
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  if (signal?.aborted) throw interrupted(signal);

  let handle: FileHandle;
  try {
    handle = await open(temp, 'wx');
  } catch (error) {
    throw outputError(error, target);
  }

  const archive = new ZipArchive({ zlib: { level: DEFLATE_LEVEL } });
  // The stream owns the handle from here on; `flush` fsyncs it before closing, and the pipeline
  // settles only after that close, so the rename below never publishes unsynced data.
  const output = handle.createWriteStream({ flush: true });
  const written = pipeline(archive, batchChunks(), output);
  let current: Readable | undefined;

  // The first thing that ends the write early: a failed output, an archiver error, or the abort
  // signal. Every wait below is guarded by it so nothing hangs on a dead stream.
  const stop = tripwire();
  written.catch(stop.trip);
  archive.on('error', stop.trip);
  // Warnings are stat failures of sources; a missing source is a broken export, not a detail.
  archive.on('warning', stop.trip);
  const onAbort = () => stop.trip(interrupted(signal));
  signal?.addEventListener('abort', onAbort, { once: true });

  let count = 0;
  try {
    const seen = new Set<string>();
    for await (const source of entries) {
      if (signal?.aborted) throw interrupted(signal);
      checkName(source.name, seen);
      current = source.file === undefined ? undefined : createReadStream(source.file);
      const input = current ?? source.data ?? Buffer.alloc(0);
      await stop.guard(appendOne(archive, input, source, current));
      current = undefined;
      count += 1;
      onProgress?.(archive.pointer(), count);
    }
    await stop.guard(archive.finalize());
    await stop.guard(written);
    await rename(temp, target);
    await syncDirectory(dirname(target));
  } catch (error) {
    current?.destroy();
    archive.destroy();
    output.destroy();
    // Windows refuses to unlink an open file: wait until the stream has closed its descriptor.
    await finished(output).catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw outputError(error, target);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  const bytes = archive.pointer();
  onProgress?.(bytes, count);
  return { bytes, entries: count };
}

/**
 * Archiver emits a header, a body and a descriptor per entry: thousands of small chunks, each a
 * write call of its own. Joined into batches of OUTPUT_BATCH_BYTES they cost a handful.
 */
function batchChunks(): Transform {
  let held: Buffer[] = [];
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      held.push(chunk);
      size += chunk.length;
      if (size < OUTPUT_BATCH_BYTES) return callback();
      const batch = Buffer.concat(held, size);
      held = [];
      size = 0;
      callback(null, batch);
    },
    flush(callback) {
      callback(null, size > 0 ? Buffer.concat(held, size) : undefined);
    },
  });
}

const OUTPUT_BATCH_BYTES = 1024 * 1024;

function checkName(name: string, seen: Set<string>): void {
  assertSafeRelative(name);
  if (seen.has(name)) {
    throw new RabbitError('BAD_ID', `refusing to archive ${JSON.stringify(name)} twice`, {
      source: name,
      errorClass: 'fatal',
    });
  }
  seen.add(name);
}

/** Resolves once archiver has consumed the entry, so the caller can pull the next source. */
function appendOne(
  archive: ZipArchive,
  input: Readable | Buffer | string,
  source: ZipSource,
  file: Readable | undefined,
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const onEntry = () => {
      file?.off('error', onFileError);
      resolvePromise();
    };
    const onFileError = (error: Error) => {
      archive.off('entry', onEntry);
      reject(
        new RabbitError('OUTPUT_UNWRITABLE', `cannot read ${source.file ?? ''} for entry ${source.name}`, {
          cause: error,
          source: source.name,
        }),
      );
    };
    // Listening here as well keeps an early open error (before archiver pipes the stream) from
    // becoming an unhandled 'error' event.
    file?.once('error', onFileError);
    archive.once('entry', onEntry);
    archive.append(input, { name: source.name, store: source.store, date: source.date ?? DEFAULT_ENTRY_DATE });
  });
}

/** Makes the rename durable; platforms that cannot fsync a directory simply skip it. */
async function syncDirectory(directory: string): Promise<void> {
  let dir: FileHandle | undefined;
  try {
    dir = await open(directory, 'r');
    await dir.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
  } finally {
    await dir?.close().catch(() => undefined);
  }
}

/**
 * A one-shot failure that every pending wait rejects with. Not `Promise.race` against one long-lived
 * promise: each race leaves a reaction on it until it settles, which grows with the entry count.
 */
function tripwire(): { trip(error: unknown): void; guard<T>(work: Promise<T>): Promise<T> } {
  let tripped: { error: unknown } | undefined;
  const waiting = new Set<(error: unknown) => void>();
  return {
    trip(error) {
      if (tripped) return;
      tripped = { error };
      for (const reject of waiting) reject(error);
      waiting.clear();
    },
    guard(work) {
      if (tripped) {
        work.catch(() => undefined);
        return Promise.reject(tripped.error);
      }
      return new Promise((resolvePromise, reject) => {
        waiting.add(reject);
        work.then(
          (value) => {
            waiting.delete(reject);
            resolvePromise(value);
          },
          (error: unknown) => {
            waiting.delete(reject);
            reject(error);
          },
        );
      });
    },
  };
}

function interrupted(signal: AbortSignal | undefined): RabbitError {
  return new RabbitError('INTERRUPTED', 'writing the archive was interrupted', { cause: signal?.reason });
}

/** Maps file-system failures to the codes the CLI turns into exit codes. */
function outputError(error: unknown, target: string): RabbitError {
  if (isRabbitError(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new RabbitError('DISK_FULL', `no space left to write ${target}`, { cause: error });
  }
  const reason =
    code === 'ENOENT' || code === 'ENOTDIR'
      ? 'its folder does not exist'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EROFS'
          ? 'the file system is read-only'
          : (error as Error | undefined)?.message ?? String(error);
  return new RabbitError('OUTPUT_UNWRITABLE', `cannot write ${target}: ${reason}`, { cause: error });
}
