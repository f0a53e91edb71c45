import type { FileHandle } from 'node:fs/promises';
import { BATCH_BYTES, readAt, writeFully } from '../core/positional-io.js';

/**
 * An append-only file written in batches of BATCH_BYTES: a zip of a million entries is millions of
 * small records, and one write call each would cost more than encoding them. Bytes already
 * appended can still be rewritten (a local header patched once its data's CRC is known) and read
 * back, wherever they are: in the pending batch or on disk.
 */
export class BatchedFile {
  private readonly batch = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  /** File offset of the batch's first byte: everything before it is on disk. */
  private flushed = 0;

  constructor(readonly handle: FileHandle) {}

  /** Bytes appended so far, on disk or pending. */
  get size(): number {
    return this.flushed + this.used;
  }

  async append(bytes: Buffer): Promise<void> {
    if (bytes.length > BATCH_BYTES / 2) {
      // Large enough to be a write of its own; copying it first would only cost time.
      await this.flush();
      await writeFully(this.handle, bytes, this.flushed);
      this.flushed += bytes.length;
      return;
    }
    if (bytes.length > BATCH_BYTES - this.used) await this.flush();
    bytes.copy(this.batch, this.used);
    this.used += bytes.length;
  }

  /** Lets `encode` write a `length`-byte record straight into the batch, flushing first if it is full. */
  async put(length: number, encode: (target: Buffer, at: number) => void): Promise<void> {
    if (length > BATCH_BYTES - this.used) await this.flush();
    if (length > BATCH_BYTES) throw new RangeError('record larger than a batch');
    encode(this.batch, this.used);
    this.used += length;
  }

  /**
   * Lets `fill` read straight into the batch's free room (at most `max` bytes) and keeps what it
   * read: a file is copied into the archive without an intermediate buffer. Returns the bytes
   * filled, valid until the next call on this object.
   */
  async appendFrom(max: number, fill: (target: Buffer) => Promise<number>): Promise<Buffer> {
    if (BATCH_BYTES - this.used < Math.min(max, MIN_FILL_BYTES)) await this.flush();
    const room = this.batch.subarray(this.used, this.used + Math.min(max, BATCH_BYTES - this.used));
    const count = await fill(room);
    this.used += count;
    return room.subarray(0, count);
  }

  /** Overwrites bytes appended earlier; never changes the size. */
  async writeAt(offset: number, bytes: Buffer): Promise<void> {
    if (offset + bytes.length > this.size) throw new RangeError('writeAt past the end of the batched file');
    const onDisk = Math.max(0, Math.min(bytes.length, this.flushed - offset));
    if (onDisk > 0) await writeFully(this.handle, bytes.subarray(0, onDisk), offset);
    if (onDisk < bytes.length) bytes.copy(this.batch, offset + onDisk - this.flushed, onDisk);
  }

  /** Up to `length` bytes from `offset`, fewer at the end of the file. */
  async readAt(offset: number, length: number): Promise<Buffer> {
    const out = Buffer.alloc(Math.max(0, Math.min(length, this.size - offset)));
    const onDisk = Math.max(0, Math.min(out.length, this.flushed - offset));
    if (onDisk > 0) await readAt(this.handle, offset, onDisk, out);
    if (onDisk < out.length)
      this.batch.copy(out, onDisk, offset + onDisk - this.flushed, offset + out.length - this.flushed);
    return out;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    await writeFully(this.handle, this.batch.subarray(0, this.used), this.flushed);
    this.flushed += this.used;
    this.used = 0;
  }
}

/** Below this much free room, appendFrom flushes first rather than read a sliver. */
const MIN_FILL_BYTES = 64 * 1024;
