import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';

export interface SpooledBody {
  sha256: string;
  size: number;
  /** Path of the content-addressed file holding the body. */
  file: string;
  /** The body itself when it was asked to be kept (JSON to parse); otherwise undefined. */
  buffer?: Buffer;
}

/**
 * A content-addressed store of response bodies on disk, beside the output. Bodies stream through
 * here so memory stays flat however large a PNG is; identical bodies (the many `[]` lists) are
 * stored once. It is also what a resumed run reuses.
 */
export class Spool {
  private counter = 0;

  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  pathOf(sha256: string): string {
    return join(this.dir, sha256);
  }

  async has(sha256: string, size: number): Promise<boolean> {
    try {
      return (await stat(this.pathOf(sha256))).size === size;
    } catch {
      return false;
    }
  }

  /**
   * Write a body to the spool. Stops with BODY_TOO_LARGE past `maxBytes` and BODY_TRUNCATED when
   * the server promised more bytes than it sent.
   */
  async write(
    chunks: AsyncIterable<Buffer>,
    options: { maxBytes: number; expectedLength?: number; keep?: boolean; source: string },
  ): Promise<SpooledBody> {
    const tmp = join(this.dir, `.part-${process.pid}-${this.counter++}-${randomBytes(4).toString('hex')}`);
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let size = 0;
    const out = createWriteStream(tmp);
    const failed = new Promise<never>((_, reject) => out.once('error', reject));
    failed.catch(() => undefined);
    try {
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > options.maxBytes) {
          throw new RabbitError('BODY_TOO_LARGE', `body of ${options.source} exceeds ${options.maxBytes} bytes`, {
            source: options.source,
          });
        }
        hash.update(chunk);
        if (options.keep) kept.push(chunk);
        if (!out.write(chunk)) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
      }
      if (options.expectedLength !== undefined && size !== options.expectedLength) {
        throw new RabbitError(
          'BODY_TRUNCATED',
          `body of ${options.source} ended after ${size} of ${options.expectedLength} bytes`,
          { source: options.source },
        );
      }
      await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
      const sha256 = hash.digest('hex');
      const file = this.pathOf(sha256);
      await rename(tmp, file);
      const result: SpooledBody = { sha256, size, file };
      if (options.keep) result.buffer = Buffer.concat(kept, size);
      return result;
    } catch (error) {
      out.destroy();
      await rm(tmp, { force: true });
      throw mapDiskError(error, options.source);
    }
  }
}

export function mapDiskError(error: unknown, source: string): unknown {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new RabbitError('DISK_FULL', 'the disk is full: no space left to store downloaded bodies', {
      source,
      cause: error,
    });
  }
  if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
    return new RabbitError('OUTPUT_UNWRITABLE', `cannot write into the work directory (${code})`, { source, cause: error });
  }
  return error;
}
