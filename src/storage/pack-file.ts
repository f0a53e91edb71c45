import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { BackgroundWrites, BATCH_BYTES, readAt, readAtSync, whole } from '../core/positional-io.js';
import { closedOnFailure, openOwnFile } from '../core/private-files.js';

/**
 * The pack: small bodies one after another in one file. Appends are gathered in memory and written
 * a batch at a time (one write per ~1 MiB or per tick of the clock instead of one per body); reads
 * of what is not written yet are served from memory. Whatever a crash loses here, the journal's
 * sha256 check catches on the next run.
 */
export class PackFile {
  private end: number;
  /** Appended but not yet handed to a write, starting at `pendingStart`; `pendingAt` their offsets. */
  private pending: Buffer[] = [];
  private pendingAt: number[] = [];
  private pendingStart: number;
  private pendingBytes = 0;
  /** Handed to a write that has not finished: start offset -> bytes. */
  private readonly writing = new Map<number, Buffer>();
  private writingBytes = 0;
  private readonly writes: BackgroundWrites;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly handle: FileHandle,
    size: number,
    mapError: (error: unknown) => unknown,
  ) {
    this.writes = new BackgroundWrites(handle, mapError);
    this.end = size;
    this.pendingStart = size;
    this.timer = setInterval(() => this.flush(), PACK_FLUSH_MS);
    this.timer.unref();
  }

  /** `mapError` turns a failed write into the error every later append and read throws. */
  static async open(path: string, mapError: (error: unknown) => unknown): Promise<PackFile> {
    // Not O_APPEND: every batch is written at the offset its bodies were given.
    const handle = await openOwnFile(path, constants.O_RDWR | constants.O_CREAT, 'the spool pack');
    const size = await closedOnFailure(handle, async () => (await handle.stat()).size);
    return new PackFile(handle, size, mapError);
  }

  /** Where the body will be; it can be read back at once. */
  append(buffer: Buffer): number {
    this.writes.check();
    const offset = this.end;
    this.end += buffer.length;
    this.pending.push(buffer);
    this.pendingAt.push(offset);
    this.pendingBytes += buffer.length;
    if (this.pendingBytes >= BATCH_BYTES) this.flush();
    return offset;
  }

  async read(offset: number, size: number, blocking: boolean): Promise<Buffer> {
    this.writes.check();
    if (offset >= this.pendingStart) {
      // Nearly always a whole body just appended: find it rather than join the batch.
      for (let i = this.pendingAt.length - 1; i >= 0; i--) {
        const at = this.pendingAt[i] as number;
        if (at <= offset) return slice(this.pending[i] as Buffer, offset - at, size);
      }
    }
    for (const [start, batch] of this.writing) {
      if (offset >= start && offset + size <= start + batch.length) return slice(batch, offset - start, size);
    }
    const data = blocking ? readAtSync(this.handle.fd, offset, size) : await readAt(this.handle, offset, size);
    return whole(data, size, 'the pack', offset);
  }

  /** Resolves at once while less than `limit` bytes wait for the disk; else once all are written. */
  async settle(limit: number): Promise<void> {
    if (this.pendingBytes + this.writingBytes < limit) return;
    this.flush();
    await this.writes.settled();
    this.writes.check();
  }

  /** Resolves once every body appended so far has been handed to the kernel, or its write has failed. */
  async written(): Promise<void> {
    this.flush();
    await this.writes.settled();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.written();
    // A failed write has already failed every later append and read; what the pack holds now only
    // serves a resumed run, which checks every body's sha256 anyway.
    await this.handle.close().catch(() => undefined);
  }

  private flush(): void {
    if (this.pendingBytes === 0 || this.writes.failed) return;
    const start = this.pendingStart;
    const batch = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingAt = [];
    this.pendingStart += this.pendingBytes;
    this.pendingBytes = 0;
    this.writing.set(start, batch);
    this.writingBytes += batch.length;
    this.writes.write(batch, start, () => {
      this.writing.delete(start);
      this.writingBytes -= batch.length;
    });
  }
}

function slice(buffer: Buffer, from: number, size: number): Buffer {
  if (from < 0 || from + size > buffer.length) throw new Error('internal: read across spooled bodies');
  return from === 0 && size === buffer.length ? buffer : buffer.subarray(from, from + size);
}

const PACK_FLUSH_MS = 50;
