import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';
import { createPrivateFile } from '../core/private-files.js';

/**
 * A file written once, front to back, that knows its size and sha256 when it is closed: what a
 * package's manifest records of each of its files, without reading any of them a second time.
 */
export class HashedFile {
  private readonly hash: Hash = createHash('sha256');
  size = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** Created exclusively and 0600, never through a symlink. */
  static async create(path: string): Promise<HashedFile> {
    try {
      return new HashedFile(path, await createPrivateFile(path));
    } catch (error) {
      throw writeError(path, error);
    }
  }

  async write(chunk: Uint8Array | string): Promise<void> {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.hash.update(bytes);
    this.size += bytes.length;
    try {
      await this.handle.write(bytes);
    } catch (error) {
      throw writeError(this.path, error);
    }
  }

  /** Closes the file: its sha256 in hex. */
  async close(): Promise<string> {
    await this.handle.close();
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
