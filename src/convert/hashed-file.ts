import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';
import { BATCH_BYTES } from '../core/positional-io.js';
import { createPrivateFile } from '../core/private-files.js';
import { BatchedFile } from '../zip/batched-file.js';

/**
 * A file written once, front to back, that knows its size and sha256 when it is closed: what a
 * package's manifest records of each of its files, without reading any of them a second time.
 *
 * What is written is copied into one batch of the file's own and written from there. Holding the
 * callers' buffers until a batch was full kept a million small records alive past the young
 * generation, each with the buffer-pool slab it was cut from, until a full collection found them:
 * that garbage, not the data, was most of what a WACZ took in memory.
 */
export class HashedFile {
  private readonly hash: Hash = createHash('sha256');
  private readonly batched: BatchedFile;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {
    this.batched = new BatchedFile(handle);
  }

  /** Created exclusively and 0600, never through a symlink. */
  static async create(path: string): Promise<HashedFile> {
    try {
      return new HashedFile(path, await createPrivateFile(path));
    } catch (error) {
      throw writeError(path, error);
    }
  }

  /** Bytes written so far (on disk or in the batch). */
  get size(): number {
    return this.batched.size;
  }

  async write(chunk: Uint8Array | string): Promise<void> {
    try {
      if (typeof chunk === 'string') {
        const text = chunk;
        const length = Buffer.byteLength(text, 'utf8');
        if (length <= BATCH_BYTES) {
          // Encoded straight into the batch and hashed from there: no buffer of its own.
          await this.batched.put(length, (target, at) => {
            target.write(text, at, length, 'utf8');
            this.hash.update(target.subarray(at, at + length));
          });
          return;
        }
        chunk = Buffer.from(text, 'utf8');
      }
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.hash.update(bytes);
      await this.batched.append(bytes);
    } catch (error) {
      throw writeError(this.path, error);
    }
  }

  /** Closes the file: its sha256 in hex. */
  async close(): Promise<string> {
    try {
      await this.batched.flush();
    } catch (error) {
      throw writeError(this.path, error);
    } finally {
      await this.handle.close();
    }
    return this.hash.digest('hex');
  }

  /** Closes the file after a failure, keeping the first error. */
  async abandon(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

export function writeError(path: string, error: unknown): RabbitError {
  if (error instanceof RabbitError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new RabbitError(
    code === 'ENOSPC' ? 'DISK_FULL' : 'OUTPUT_UNWRITABLE',
    `cannot write ${path}: ${(error as Error).message}`,
    { cause: error },
  );
}
