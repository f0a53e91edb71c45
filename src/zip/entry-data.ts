import type { FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import type { BatchedFile } from './batched-file.js';
import { interrupted, unreadable } from '../core/output-file.js';

/**
 * How an entry's data reaches the archive: stored or deflated, from memory, a file or a stream,
 * with its CRC-32 and both sizes computed on the way so that the local header can carry them.
 */

export interface WrittenData {
  crc: number;
  size: number;
  compressedSize: number;
}

/** zlib level 6: zlib's own default. Level 1 is barely faster on small JSON bodies. */
const DEFLATE_LEVEL = 6;

/**
 * zlib level 3, for what this tool writes itself (manifest.json, the viewer's pages): it deflates
 * them in about half the CPU of level 6 for a few per cent more bytes, and a big manifest is the
 * largest single thing an export deflates. The bodies as served keep level 6.
 */
export const FAST_DEFLATE_LEVEL = 3;
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * One-shot deflate of a body already in memory: the cheapest path for the many small entries.
 * The window and hash table are sized to the body (zlib's defaults for 32 KiB and up): a 1 KiB
 * body compresses to the same size, and zlib no longer sets up 256 KiB of state for it, which
 * was a noticeable part of the CPU of every small entry.
 */
export function deflateBuffer(data: Buffer, level = DEFLATE_LEVEL): Buffer {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(data.length + 1))));
  return deflateRawSync(data, { level, windowBits, memLevel: Math.min(8, windowBits - 6) });
}

export interface FileRange {
  file: string;
  offset: number;
  size: number;
  /** The entry name, for error messages. */
  entry: string;
}

/** Copies a range of `input` straight into the output's batches: no intermediate buffer. */
export async function copyStored(
  out: BatchedFile,
  input: FileHandle,
  range: FileRange,
  signal?: AbortSignal,
): Promise<WrittenData> {
  const { file, offset, size, entry } = range;
  let crc = 0;
  for (let done = 0; done < size;) {
    if (signal?.aborted) throw interrupted(signal);
    const chunk = await out.appendFrom(size - done, async (target) => {
      const { bytesRead } = await input.read(target, 0, target.length, offset + done).catch((error: unknown) => {
        throw unreadable(file, entry, error);
      });
      if (bytesRead === 0) throw unreadable(file, entry, new Error(`the file ends before byte ${offset + size}`));
      return bytesRead;
    });
    crc = crc32(chunk, crc);
    done += chunk.length;
  }
  return { crc, size, compressedSize: size };
}

/** Deflates a stream of chunks (of unknown total length) into the output. */
export async function deflateStream(
  out: BatchedFile,
  chunks: AsyncIterable<Buffer | string>,
  signal?: AbortSignal,
  level = DEFLATE_LEVEL,
): Promise<WrittenData> {
  const start = out.size;
  let crc = 0;
  let size = 0;
  async function* measured(): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      crc = crc32(bytes, crc);
      size += bytes.length;
      yield bytes;
    }
  }
  await pipeline(
    measured,
    createDeflateRaw({ level, chunkSize: 64 * 1024 }),
    async (deflated: AsyncIterable<Buffer>) => {
      for await (const piece of deflated) await out.append(piece);
    },
    signal ? { signal } : {},
  );
  return { crc, size, compressedSize: out.size - start };
}

/** A range of a file in fresh chunks: the deflate stream may hold on to them for a while. */
export async function* readRange(input: FileHandle, range: FileRange): AsyncGenerator<Buffer> {
  const { file, offset, size, entry } = range;
  for (let done = 0; done < size;) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, size - done));
    const { bytesRead } = await input.read(chunk, 0, chunk.length, offset + done).catch((error: unknown) => {
      throw unreadable(file, entry, error);
    });
    if (bytesRead === 0) throw unreadable(file, entry, new Error(`the file ends before byte ${offset + size}`));
    done += bytesRead;
    yield chunk.subarray(0, bytesRead);
  }
}
