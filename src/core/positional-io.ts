import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * Positional file I/O with one contract for every caller (the zip reader, the batched files, the
 * spool, the spills). A read returns the bytes the file holds from `position`, up to `length`:
 * fewer only where the file ends, never fewer because one system call returned less. A caller
 * that needs every byte asks `whole`, which says the file was cut short. A write writes all of
 * its bytes or fails.
 */

/** Up to `length` bytes at `position`, with blocking reads (into `into` when it is large enough). */
export function readAtSync(fd: number, position: number, length: number, into?: Buffer): Buffer {
  const buffer = into !== undefined && into.length >= length ? into : Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(fd, buffer, filled, length - filled, position + filled);
    if (read === 0) break;
    filled += read;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

/** Up to `length` bytes at `position`, through the thread pool (into `into` when it is large enough). */
export async function readAt(handle: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  const buffer = into !== undefined && into.length >= length ? into : Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

/** `data` when it holds all `length` bytes read at `position`; else `what` was cut short there. */
export function whole(data: Buffer, length: number, what: string, position: number): Buffer {
  if (data.length < length) throw new Error(`${what} is cut short at ${position}`);
  return data;
}

/** Writes all of `data` at `position`: one positional write may write less than it was given. */
export async function writeFully(handle: FileHandle, data: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < data.length)
    written += (await handle.write(data, written, data.length - written, position + written)).bytesWritten;
}

/** How much a batched writer gathers in memory before one write call (BatchedFile, BackgroundWrites' callers). */
export const BATCH_BYTES = 1024 * 1024;

/**
 * Batches written at their own offsets in the background, one after another, so that appending
 * stays a synchronous call on the hot path (the spool's pack, the keyed spills). The first failure
 * is kept, as `mapError` turns it, and thrown by every later `check`.
 */
export class BackgroundWrites {
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly handle: FileHandle,
    private readonly mapError: (error: unknown) => unknown,
  ) {}

  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Throws the first failure, if a write has failed. */
  check(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** Queues `batch` to be written at `position`; `settled` runs once it is written or has failed. */
  write(batch: Buffer, position: number, settled?: () => void): void {
    this.chain = this.chain
      .then(() => writeFully(this.handle, batch, position))
      .catch((error: unknown) => {
        this.failure ??= this.mapError(error);
      })
      .finally(settled);
  }

  /** Waits for every write queued so far. */
  async settled(): Promise<void> {
    await this.chain;
  }
}
