import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { readAt } from '../../core/positional-io.js';
import { createPrivateFile } from '../../core/private-files.js';

/**
 * Lines sorted in the byte order of their UTF-8 (what a CDXJ reader's binary search expects),
 * however many there are: a run of lines is gathered in one buffer, sorted there and written to
 * the work folder when the buffer is full, and the runs are merged as the lines are read back.
 * Memory holds the run's two buffers and a chunk of each run being merged, whatever the count.
 *
 * The run lives in buffers of its own, allocated once, rather than as a buffer per line: each
 * small buffer is a slice of a slab of Node's buffer pool that the records written meanwhile also
 * took from, so sixteen thousand lines waiting for their run kept a hundred megabytes of slabs alive.
 */
const RUN_LINES = 65_536;
const RUN_BYTES = 4 * 1024 * 1024;
/** How much of each run the merge reads at a time (a line longer than this is read whole). */
const MERGE_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export class SortedLines {
  private text: Buffer;
  /** Where each line of the run starts in `text`, and (one past) where the last one ends. */
  private readonly starts: Uint32Array;
  private lines = 0;
  private used = 0;
  private readonly runs: string[] = [];

  constructor(
    private readonly workDir: string,
    private readonly runLines = RUN_LINES,
    runBytes = RUN_BYTES,
  ) {
    this.text = Buffer.allocUnsafe(runBytes);
    this.starts = new Uint32Array(runLines + 1);
  }

  /** A line without a newline of its own. */
  async add(line: string): Promise<void> {
    const length = Buffer.byteLength(line, 'utf8');
    if (this.lines >= this.runLines || length > this.text.length - this.used) await this.spill();
    // A line longer than the whole run buffer (only a hostile manifest's URL could be): the buffer grows for it.
    if (length > this.text.length) this.text = Buffer.allocUnsafe(length);
    this.starts[this.lines] = this.used;
    this.used += this.text.write(line, this.used, length, 'utf8');
    this.starts[++this.lines] = this.used;
  }

  /** Every line added, in order, each without its newline. */
  async *sorted(): AsyncGenerator<string> {
    if (this.runs.length === 0) {
      for (const line of this.order()) yield this.line(line).toString('utf8');
      return;
    }
    if (this.lines > 0) await this.spill();
    const readers: RunReader[] = [];
    try {
      for (const file of this.runs) readers.push(await RunReader.open(file));
      const heads: (Buffer | undefined)[] = [];
      for (const reader of readers) heads.push(await reader.next());
      for (;;) {
        let least = -1;
        for (let i = 0; i < heads.length; i++) {
          const head = heads[i];
          if (head !== undefined && (least < 0 || Buffer.compare(head, heads[least] as Buffer) < 0)) least = i;
        }
        if (least < 0) return;
        // The string is made before the next read, which may reuse the chunk the head is a view of.
        yield (heads[least] as Buffer).toString('utf8');
        heads[least] = await (readers[least] as RunReader).next();
      }
    } finally {
      for (const reader of readers) await reader.close();
    }
  }

  /** The run's line numbers in the byte order of their lines. */
  private order(): Uint32Array {
    const { text, starts } = this;
    const order = new Uint32Array(this.lines);
    for (let i = 0; i < order.length; i++) order[i] = i;
    return order.sort((a, b) =>
      text.compare(text, starts[b] as number, starts[b + 1] as number, starts[a] as number, starts[a + 1] as number),
    );
  }

  private line(n: number): Buffer {
    return this.text.subarray(this.starts[n] as number, this.starts[n + 1] as number);
  }

  /** The run, sorted, into a file of the work folder, written a run buffer's worth at a time. */
  private async spill(): Promise<void> {
    if (this.lines === 0) return;
    const file = join(this.workDir, `index-run-${this.runs.length}`);
    const handle = await createPrivateFile(file);
    try {
      const out = Buffer.allocUnsafe(Math.min(this.used + this.lines, MERGE_CHUNK_BYTES * 16));
      let filled = 0;
      for (const n of this.order()) {
        const line = this.line(n);
        if (filled + line.length + 1 > out.length) {
          if (filled > 0) await handle.write(out, 0, filled);
          filled = 0;
          if (line.length + 1 > out.length) {
            await handle.write(Buffer.concat([line, Buffer.of(NEWLINE)]));
            continue;
          }
        }
        filled += line.copy(out, filled);
        out[filled++] = NEWLINE;
      }
      if (filled > 0) await handle.write(out, 0, filled);
    } finally {
      await handle.close();
    }
    this.runs.push(file);
    this.lines = 0;
    this.used = 0;
  }
}

/** One sorted run read back a chunk at a time, a line at a time: each line a view into the chunk, valid until the next. */
class RunReader {
  private chunk = Buffer.allocUnsafe(MERGE_CHUNK_BYTES);
  /** The unread part of the chunk is chunk[from, to). */
  private from = 0;
  private to = 0;
  private position = 0;
  private ended = false;

  private constructor(private readonly handle: FileHandle) {}

  /** A run this object wrote into the work folder (made private by mkdtemp), read never through a link. */
  static async open(file: string): Promise<RunReader> {
    return new RunReader(await open(file, constants.O_RDONLY | constants.O_NOFOLLOW));
  }

  async next(): Promise<Buffer | undefined> {
    for (;;) {
      const newline = this.chunk.indexOf(NEWLINE, this.from);
      if (newline !== -1 && newline < this.to) {
        const line = this.chunk.subarray(this.from, newline);
        this.from = newline + 1;
        return line;
      }
      if (this.ended) return undefined;
      await this.refill();
    }
  }

  /** Keeps the unread tail at the chunk's start and reads on after it; a tail that fills the chunk doubles it. */
  private async refill(): Promise<void> {
    const tail = this.to - this.from;
    if (tail === this.chunk.length) {
      const larger = Buffer.allocUnsafe(this.chunk.length * 2);
      this.chunk.copy(larger, 0, this.from, this.to);
      this.chunk = larger;
    } else {
      this.chunk.copy(this.chunk, 0, this.from, this.to);
    }
    this.from = 0;
    this.to = tail;
    const read = await readAt(this.handle, this.position, this.chunk.length - tail, this.chunk.subarray(tail));
    this.position += read.length;
    this.to += read.length;
    if (read.length < this.chunk.length - tail) this.ended = true;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
