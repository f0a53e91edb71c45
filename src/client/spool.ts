import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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

  /**
   * Content-addressed: an existing file normally holds exactly these bytes already (the many
   * `[]` lists). One left torn by a killed run does not, and is replaced.
   */
  private async writeSmall(file: string, buffer: Buffer): Promise<void> {
    try {
      await writeFile(file, buffer, { flag: 'wx' });
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const existing = await readFile(file).catch(() => undefined);
      if (existing?.equals(buffer)) return;
      const tmp = join(this.dir, `.part-${process.pid}-${this.counter++}-${randomBytes(4).toString('hex')}`);
      await writeFile(tmp, buffer);
      await rename(tmp, file);
    }
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
   * the server promised more bytes than it sent. Small bodies (most of an account: JSON, XHTML)
   * are gathered in memory and written once under their final name; only large ones stream
   * through a temp file, so memory stays flat however large a PNG is.
   */
  async write(
    chunks: AsyncIterable<Buffer>,
    options: { maxBytes: number; expectedLength?: number; keep?: boolean; source: string },
  ): Promise<SpooledBody> {
    const hash = createHash('sha256');
    const held: Buffer[] = [];
    let size = 0;
    let out: FileWriter | undefined;
    try {
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > options.maxBytes) {
          throw new RabbitError('BODY_TOO_LARGE', `body of ${options.source} exceeds ${options.maxBytes} bytes`, {
            source: options.source,
          });
        }
        hash.update(chunk);
        if (out) {
          await out.write(chunk);
          continue;
        }
        held.push(chunk);
        if (size > SMALL_BODY_BYTES && !options.keep) {
          out = new FileWriter(join(this.dir, `.part-${process.pid}-${this.counter++}-${randomBytes(4).toString('hex')}`));
          for (const part of held.splice(0)) await out.write(part);
        }
      }
      if (options.expectedLength !== undefined && size !== options.expectedLength) {
        throw new RabbitError(
          'BODY_TRUNCATED',
          `body of ${options.source} ended after ${size} of ${options.expectedLength} bytes`,
          { source: options.source },
        );
      }
      const sha256 = hash.digest('hex');
      const file = this.pathOf(sha256);
      if (out) {
        await out.finish();
        await rename(out.path, file);
        return { sha256, size, file };
      }
      const buffer = Buffer.concat(held, size);
      await this.writeSmall(file, buffer);
      return options.keep ? { sha256, size, file, buffer } : { sha256, size, file };
    } catch (error) {
      if (out) await out.discard();
      throw mapDiskError(error, options.source);
    }
  }
}

/** Bodies up to this size are held in memory until complete, then written in one go. */
const SMALL_BODY_BYTES = 256 * 1024;

/** A temp file written with back-pressure, for bodies too large to hold. */
class FileWriter {
  private readonly stream: WriteStream;
  private readonly failed: Promise<never>;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path);
    this.failed = new Promise<never>((_, reject) => this.stream.once('error', reject));
    this.failed.catch(() => undefined);
  }

  async write(chunk: Buffer): Promise<void> {
    if (!this.stream.write(chunk)) {
      await Promise.race([new Promise<void>((resolve) => this.stream.once('drain', () => resolve())), this.failed]);
    }
  }

  async finish(): Promise<void> {
    await Promise.race([new Promise<void>((resolve) => this.stream.end(() => resolve())), this.failed]);
  }

  async discard(): Promise<void> {
    this.stream.destroy();
    await rm(this.path, { force: true });
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
