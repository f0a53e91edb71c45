import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';
import { createPrivateFile } from '../core/private-files.js';

const BATCH_BYTES = 1024 * 1024;

/**
 * A file written once, front to back, that knows its size and sha256 when it is closed: what a
 * package's manifest records of each of its files, without reading any of them a second time.
 */
export class HashedFile {
  private readonly hash: Hash = createHash('sha256');
  /** Bytes not yet written: small records are gathered into writes of BATCH_BYTES, not a syscall each. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
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
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= BATCH_BYTES) await this.flush();
  }

  /** Closes the file: its sha256 in hex. */
  async close(): Promise<string> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
    return this.hash.digest('hex');
  }

  private async flush(): Promise<void> {
    const chunks = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    try {
      if (chunks.length > 0) await this.handle.writev(chunks);
    } catch (error) {
      throw writeError(this.path, error);
    }
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
