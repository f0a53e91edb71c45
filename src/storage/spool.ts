import { createHash, hash as oneShotHash, randomBytes, type Hash } from 'node:crypto';
import { constants, createWriteStream, type WriteStream } from 'node:fs';
import { lstat, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChunkSource } from '../core/read-chunks.js';
import { RabbitError } from '../core/errors.js';
import { PackFile } from './pack-file.js';
import { readAt, whole } from '../core/positional-io.js';
import { createPrivateFile, ensurePrivateDir } from '../core/private-files.js';

/** Where a body's bytes are on disk: a whole file, or `size` bytes at `offset` in the pack file. */
export interface BodyRef {
  file: string;
  offset?: number;
  size: number;
}

export interface SpooledBody extends BodyRef {
  sha256: string;
  /**
   * The body itself when it is in memory anyway: every small body (written once, whole) and any
   * asked to be kept (JSON to parse); undefined for a large body streamed to a file of its own.
   */
  buffer?: Buffer;
}

/**
 * Response bodies on disk, beside the output, until the zip is written; also what a resumed run
 * reuses. Bodies stream through here so memory stays flat however large a PNG is. Small bodies,
 * most of an account, are appended to one pack file: creating a file per body costs the file
 * system far more than a positional write into one file does. Large ones get a
 * content-addressed file of their own.
 */
export class Spool {
  private counter = 0;
  private pack: PackFile | undefined;
  readonly packPath: string;

  constructor(readonly dir: string) {
    this.packPath = join(dir, 'pack');
  }

  async init(): Promise<void> {
    await ensurePrivateDir(this.dir, 'the spool folder');
    this.pack = await PackFile.open(this.packPath, (error) => mapDiskError(error, 'the spool'));
  }

  /**
   * Waits, when the pack holds more than PACK_BACKLOG_BYTES not yet on disk, until it is written.
   * For bodies made here rather than downloaded (the offline viewer's copies of a prototype's
   * pages): they come as fast as the CPU makes them, with blocking reads in between, and would
   * otherwise pile up in memory ahead of the writes, one batch per megabyte.
   */
  async settle(): Promise<void> {
    await this.pack?.settle(PACK_BACKLOG_BYTES);
  }

  /**
   * Resolves once every body stored so far is in the kernel's hands (a killed process then loses
   * none of it): the journal waits for this before it names them.
   */
  async written(): Promise<void> {
    await this.pack?.written();
  }

  /** Writes what is still buffered and closes the pack. */
  async close(): Promise<void> {
    await this.pack?.close();
    this.pack = undefined;
  }

  /** A spooled body's bytes, through the open pack for packed ones (the zip writer reads thousands). */
  read(ref: BodyRef): Promise<Buffer> {
    return this.readRef(ref, false);
  }

  /**
   * As `read`, but a packed body on disk is read with a blocking call: for the offline viewer,
   * which reads two to three small bodies a page, most of them just written and still in the page
   * cache. A `FileHandle.read` is a round trip through the thread pool and costs several times the
   * CPU of `readSync`, whose pause is too short to matter to the responses arriving meanwhile.
   */
  readBlocking(ref: BodyRef): Promise<Buffer> {
    return this.readRef(ref, true);
  }

  private async readRef(ref: BodyRef, blocking: boolean): Promise<Buffer> {
    if (ref.offset === undefined || ref.file !== this.packPath || !this.pack) return readSpooled(ref);
    return this.pack.read(ref.offset, ref.size, blocking);
  }

  /** Where a body the spool holds is: in the pack at `offset`, else in a file named by its sha256. */
  refOf(body: { sha256: string; size: number; offset?: number }): BodyRef {
    return body.offset === undefined
      ? { file: this.pathOf(body.sha256), size: body.size }
      : { file: this.packPath, offset: body.offset, size: body.size };
  }

  pathOf(sha256: string): string {
    return join(this.dir, sha256);
  }

  async has(sha256: string, size: number): Promise<boolean> {
    try {
      const stats = await lstat(this.pathOf(sha256));
      return stats.isFile() && stats.size === size;
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
    body: ChunkSource,
    options: {
      maxBytes: number;
      expectedLength?: number;
      keep?: boolean;
      source: string;
      onChunk?: (bytes: number) => void;
    },
  ): Promise<SpooledBody> {
    // Bodies held whole in memory (nearly all) are hashed in one call at the end: a hash object
    // per body cost more than the hashing itself. Only one streamed to a file is hashed as it comes.
    let streamed: { out: FileWriter; hash: Hash } | undefined;
    let opening: Promise<void> | undefined;
    const held: Buffer[] = [];
    let size = 0;
    try {
      await body.read((chunk) => {
        size += chunk.length;
        options.onChunk?.(chunk.length);
        if (size > options.maxBytes) {
          throw new RabbitError('BODY_TOO_LARGE', `body of ${options.source} exceeds ${options.maxBytes} bytes`, {
            source: options.source,
          });
        }
        if (streamed) {
          streamed.hash.update(chunk);
          return streamed.out.write(chunk);
        }
        held.push(chunk);
        if (opening) return opening;
        if (size <= SMALL_BODY_BYTES || options.keep) return undefined;
        // Too large to hold: to a temp file of our own (0600, made exclusively), then everything held so far.
        const part = join(this.dir, `.part-${process.pid}-${this.counter++}-${randomBytes(4).toString('hex')}`);
        opening = createPrivateFile(part).then((handle) => {
          const out = new FileWriter(part, handle);
          const hash = createHash('sha256');
          let waiting: Promise<void> | undefined;
          for (const part of held.splice(0)) {
            hash.update(part);
            waiting = out.write(part) ?? waiting;
          }
          streamed = { out, hash };
          return waiting;
        });
        return opening;
      });
      if (options.expectedLength !== undefined && size !== options.expectedLength) {
        throw new RabbitError(
          'BODY_TRUNCATED',
          `body of ${options.source} ended after ${size} of ${options.expectedLength} bytes`,
          { source: options.source },
        );
      }
      if (streamed) {
        const sha256 = streamed.hash.digest('hex');
        const file = this.pathOf(sha256);
        await streamed.out.finish();
        await rename(streamed.out.path, file);
        return { sha256, size, file };
      }
      const buffer = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, size);
      if (!this.pack) throw new Error('internal: spool used before init');
      const sha256 = oneShotHash('sha256', buffer, 'hex');
      const offset = this.pack.append(buffer);
      return { sha256, size, file: this.packPath, offset, buffer };
    } catch (error) {
      await opening?.catch(() => undefined);
      if (streamed) await streamed.out.discard();
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
  private drained: Promise<void> | undefined;

  /** `handle`: the temp file, made 0600 and exclusively (createPrivateFile). */
  constructor(
    readonly path: string,
    handle: FileHandle,
  ) {
    this.stream = createWriteStream(path, { fd: handle });
    this.failed = new Promise<never>((_, reject) => this.stream.once('error', reject));
    this.failed.catch(() => undefined);
  }

  /**
   * Undefined when the chunk was taken at once; else a promise of the file stream's drain, one for
   * every write until it comes (the chunks held before a body goes to disk are written together).
   */
  write(chunk: Buffer): Promise<void> | undefined {
    if (this.stream.write(chunk)) return undefined;
    this.drained ??= Promise.race([
      new Promise<void>((resolve) =>
        this.stream.once('drain', () => {
          this.drained = undefined;
          resolve();
        }),
      ),
      this.failed,
    ]);
    return this.drained;
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
  const handle = await open(ref.file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return whole(await readAt(handle, ref.offset ?? 0, ref.size), ref.size, ref.file, ref.offset ?? 0);
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
    return new RabbitError('OUTPUT_UNWRITABLE', `cannot write into the work directory (${code})`, {
      source,
      cause: error,
    });
  }
  return error;
}

/** Bytes of the pack not yet on disk past which `settle` waits for the writes. */
const PACK_BACKLOG_BYTES = 8 * 1024 * 1024;
