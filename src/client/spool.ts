import { createHash, randomBytes } from 'node:crypto';
import { constants, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';

/** Where a body's bytes are on disk: a whole file, or `size` bytes at `offset` in the pack file. */
export interface BodyRef {
  file: string;
  offset?: number;
  size: number;
}

export interface SpooledBody extends BodyRef {
  sha256: string;
  /** The body itself when it was asked to be kept (JSON to parse); otherwise undefined. */
  buffer?: Buffer;
}

/**
 * Response bodies on disk, beside the output, until the zip is written; also what a resumed run
 * reuses. Bodies stream through here so memory stays flat however large a PNG is. Small bodies,
 * most of an account, are appended to one pack file: creating a file per body costs about a
 * millisecond of file-system work on the disks measured here, a positional write a few
 * microseconds. Large ones get a content-addressed file of their own.
 */
export class Spool {
  private counter = 0;
  private pack: FileHandle | undefined;
  private packEnd = 0;

  constructor(readonly dir: string) {}

  get packPath(): string {
    return join(this.dir, 'pack');
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Not O_APPEND: offsets are handed out before the writes complete, in any order.
    this.pack = await open(this.packPath, constants.O_RDWR | constants.O_CREAT);
    this.packEnd = (await this.pack.stat()).size;
  }

  async close(): Promise<void> {
    await this.pack?.close().catch(() => undefined);
    this.pack = undefined;
  }

  private async append(buffer: Buffer): Promise<number> {
    if (!this.pack) throw new Error('internal: spool used before init');
    const offset = this.packEnd;
    this.packEnd += buffer.length;
    let written = 0;
    while (written < buffer.length) {
      const { bytesWritten } = await this.pack.write(buffer, written, buffer.length - written, offset + written);
      written += bytesWritten;
    }
    return offset;
  }

  /** A spooled body's bytes, through the open pack for packed ones (the zip writer reads thousands). */
  async read(ref: BodyRef): Promise<Buffer> {
    if (ref.offset === undefined || ref.file !== this.packPath || !this.pack) return readSpooled(ref);
    const buffer = Buffer.alloc(ref.size);
    let read = 0;
    while (read < ref.size) {
      const { bytesRead } = await this.pack.read(buffer, read, ref.size - read, ref.offset + read);
      if (bytesRead === 0) throw new Error(`spooled body at ${ref.offset} is cut short`);
      read += bytesRead;
    }
    return buffer;
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
      if (out) {
        const file = this.pathOf(sha256);
        await out.finish();
        await rename(out.path, file);
        return { sha256, size, file };
      }
      const buffer = Buffer.concat(held, size);
      const offset = await this.append(buffer);
      const body: SpooledBody = { sha256, size, file: this.packPath, offset };
      if (options.keep) body.buffer = buffer;
      return body;
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

/** Reads a spooled body's bytes; `Spool.read` is the fast one, `readSpooled` works without a Spool. */
export type BodyReader = (ref: BodyRef) => Promise<Buffer>;

/** The bytes of a spooled body, wherever they are (opens the file: for occasional reads). */
export async function readSpooled(ref: BodyRef): Promise<Buffer> {
  const start = ref.offset ?? 0;
  const handle = await open(ref.file, 'r');
  try {
    const buffer = Buffer.alloc(ref.size);
    let read = 0;
    while (read < ref.size) {
      const { bytesRead } = await handle.read(buffer, read, ref.size - read, start + read);
      if (bytesRead === 0) throw new Error(`spooled body at ${start} in ${ref.file} is cut short`);
      read += bytesRead;
    }
    return buffer;
  } finally {
    await handle.close();
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
