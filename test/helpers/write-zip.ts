import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { outputError, unreadable } from '../../src/core/output-file.js';
import { ZipWriter } from '../../src/zip/zip-writer.js';
import { assertSafeRelative } from '../../src/api/paths.js';

/*
 * A whole zip from a list of sources in one call: the tests' way to make archives and fixtures.
 * The tool itself adds entries to a ZipWriter as its crawl stores them; only tests need this.
 */

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
 * Writes the entries into a zip at `destPath` through a ZipWriter, pulling the next source only
 * after the previous one is in the archive, so at most one file is open at a time.
 */
export async function writeZip(
  entries: Iterable<ZipSource> | AsyncIterable<ZipSource>,
  destPath: string,
  options: WriteZipOptions = {},
): Promise<WriteZipResult> {
  const { signal, onProgress } = options;
  const writer = await ZipWriter.create(destPath, { ...(signal ? { signal } : {}), checkName: assertSafeRelative });
  try {
    for await (const source of entries) {
      const meta = { name: source.name, store: source.store, ...(source.date ? { date: source.date } : {}) };
      if (source.file !== undefined) {
        const file = source.file;
        const { size } = await stat(file).catch((error: unknown) => {
          throw unreadable(file, source.name, error);
        });
        await writer.addFile(meta, { file, size });
      } else {
        const data = source.data ?? EMPTY;
        await writer.addBuffer(meta, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      }
      onProgress?.(writer.bytes, writer.entries);
    }
    const result = await writer.finish();
    onProgress?.(result.bytes, result.entries);
    return result;
  } catch (error) {
    await writer.abort();
    throw outputError(error, resolve(destPath));
  }
}

const EMPTY = Buffer.alloc(0);
