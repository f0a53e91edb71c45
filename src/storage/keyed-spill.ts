import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { BackgroundWrites, BATCH_BYTES, readAt, whole } from '../core/positional-io.js';
import { mapDiskError } from './spool.js';
import { openOwnFile } from '../core/private-files.js';

/**
 * Lines filed under a key (a prototype id), kept on disk so that what grows with the account does
 * not grow in memory. Appends are gathered and written a batch at a time, each batch grouped by
 * key, so one key's lines sit in a few contiguous segments of one file; reading a key back reads
 * only its segments. Memory holds one segment list per key (a handful of numbers while a crawl
 * works through an account depth-first) and at most one batch of lines, whatever the number of
 * keys. A read does not write the batch out: the key's lines still in it are read from memory.
 * Writing it out at each read cut every key being filed into a piece per read (the viewer reads
 * each prototype as it is done, while the crawl files the others), each piece a read of its own.
 */
export class KeyedSpill {
  private readonly segments = new Map<string, number[]>();
  private readonly counts = new Map<string, number>();
  private pending = new Map<string, string[]>();
  private pendingBytes = 0;
  private end = 0;
  /** Where the writes finished so far end: every byte before it is on disk. */
  private durable = 0;
  private readonly writes: BackgroundWrites;

  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
  ) {
    this.writes = new BackgroundWrites(handle, (error) => mapDiskError(error, path));
  }

  static async create(path: string): Promise<KeyedSpill> {
    try {
      const { O_RDWR, O_CREAT, O_TRUNC } = constants;
      return new KeyedSpill(await openOwnFile(path, O_RDWR | O_CREAT | O_TRUNC, 'the work file'), path);
    } catch (error) {
      throw mapDiskError(error, path);
    }
  }

  append(key: string, line: string): void {
    this.writes.check();
    let lines = this.pending.get(key);
    if (!lines) this.pending.set(key, (lines = []));
    lines.push(line);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.pendingBytes += line.length + 1;
    if (this.pendingBytes >= BATCH_BYTES) this.flush();
  }

  /**
   * Lines already in bytes, filed under the key as one segment: a sorted run of a big prototype's
   * lines goes back to disk without being decoded into strings and encoded again.
   */
  appendLines(key: string, lines: readonly Buffer[]): void {
    this.writes.check();
    if (lines.length === 0) return;
    this.flush();
    const parts: Buffer[] = [];
    for (const line of lines) parts.push(line, NEWLINE);
    const chunk = Buffer.concat(parts);
    const spans = this.segments.get(key) ?? [];
    addSpan(spans, this.end, chunk.length);
    this.segments.set(key, spans);
    this.counts.set(key, (this.counts.get(key) ?? 0) + lines.length);
    this.write(chunk);
  }

  /** How many lines were filed under the key. */
  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  keys(): string[] {
    return [...this.counts.keys()];
  }

  /** Every line filed under the key, in the order appended. */
  async lines(key: string): Promise<string[]> {
    const out: string[] = [];
    for await (const data of this.chunks(key)) {
      for (const line of data.toString('utf8', 0, data.length - 1).split('\n')) out.push(line);
    }
    return out;
  }

  /**
   * The same lines one at a time, read a chunk at a time: for a key with more lines than memory
   * should hold at once (one prototype of hundreds of thousands of resources).
   */
  async *eachLine(key: string): AsyncGenerator<string> {
    for await (const data of this.chunks(key)) yield* data.toString('utf8', 0, data.length - 1).split('\n');
  }

  /**
   * The same lines as bytes, newlines left out: views into the chunks read, so no line is decoded
   * into a string (the manifest copies them into its text byte by byte).
   */
  async lineBytes(key: string): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for await (const data of this.chunks(key)) {
      for (let from = 0, nl = data.indexOf(10); nl !== -1; from = nl + 1, nl = data.indexOf(10, from))
        out.push(data.subarray(from, nl));
    }
    return out;
  }

  /**
   * The same lines again, newlines left out, read a chunk at a time: for keys with more lines than
   * should be in memory at once. Each line is a view into its chunk; `chunkBytes` is how much is
   * read at a time (smaller where many keys are read side by side, as sorted runs are merged).
   */
  async *lineStream(key: string, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
    for await (const data of this.chunks(key, chunkBytes)) {
      for (let from = 0, nl = data.indexOf(10); nl !== -1; from = nl + 1, nl = data.indexOf(10, from))
        yield data.subarray(from, nl);
    }
  }

  /**
   * The key's lines in newline-ended chunks: its segments on disk, then its lines still in the
   * batch. Taken as they are once the key's segments are written; a failed write fails the read.
   */
  private async *chunks(key: string, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
    const segments = this.segments.get(key) ?? [];
    while (spansEnd(segments) > this.durable) {
      await this.writes.settled();
      this.writes.check();
    }
    this.writes.check();
    const spans = [...segments];
    const pending = this.pending.get(key);
    const held = pending && pending.length > 0 ? Buffer.from(`${pending.join('\n')}\n`, 'utf8') : undefined;
    yield* spanChunks(this.handle, spans, this.path, chunkBytes);
    if (held) yield held;
  }

  async close(): Promise<void> {
    this.flush();
    await this.writes.settled();
    await this.handle.close().catch(() => undefined);
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const parts: Buffer[] = [];
    let at = this.end;
    for (const [key, lines] of this.pending) {
      const chunk = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
      const spans = this.segments.get(key) ?? [];
      addSpan(spans, at, chunk.length);
      this.segments.set(key, spans);
      parts.push(chunk);
      at += chunk.length;
    }
    this.pending = new Map();
    this.pendingBytes = 0;
    this.write(Buffer.concat(parts));
  }

  /** Writes `data` at the end of the file, after every write before it. */
  private write(data: Buffer): void {
    const start = this.end;
    this.end += data.length;
    // Writes finish in order: when this one has, everything before its end is on disk.
    this.writes.write(data, start, () => {
      this.durable = start + data.length;
    });
  }
}

const NEWLINE = Buffer.from('\n');

/**
 * Adds a byte range to a list of (offset, length) pairs; a range that starts where the last one
 * ends grows it instead, so lines written one after another stay one segment.
 */
export function addSpan(spans: number[], offset: number, length: number): void {
  const last = spans.length - 2;
  if (last >= 0 && (spans[last] as number) + (spans[last + 1] as number) === offset)
    spans[last + 1] = (spans[last + 1] as number) + length;
  else spans.push(offset, length);
}

/** Where the last of a list of (offset, length) pairs ends; 0 for none. */
function spansEnd(spans: readonly number[]): number {
  const last = spans.length - 2;
  return last < 0 ? 0 : (spans[last] as number) + (spans[last + 1] as number);
}

/** The newline-ended lines in the given byte ranges of a file, in order. */
export async function readSpanLines(handle: FileHandle, spans: readonly number[], path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const data of spanChunks(handle, spans, path)) {
    for (const line of data.toString('utf8', 0, data.length - 1).split('\n')) out.push(line);
  }
  return out;
}

/** The given (offset, length) ranges of a file, in order, in chunks that each end with a newline. */
async function* spanChunks(
  handle: FileHandle,
  spans: readonly number[],
  path: string,
  chunkBytes = READ_CHUNK_BYTES,
): AsyncGenerator<Buffer> {
  for (let i = 0; i < spans.length; i += 2) {
    const start = spans[i] as number;
    for await (const { data } of newlineChunks(handle, start, start + (spans[i + 1] as number), path, chunkBytes))
      yield data;
  }
}

/**
 * The bytes from `start` to `end` of a file in chunks that each end with a newline, `offset` where
 * each begins. Read at most READ_CHUNK_BYTES at a time: one prototype's lines run to megabytes at
 * a million resources, and buffers that large, allocated and freed over and over, leave the C heap
 * fragmented for the rest of the run (glibc raises its mmap threshold to the largest one freed).
 * Chunks are cut at newline bytes, never inside a multi-byte character; bytes after the last
 * newline (a torn last line) are left out.
 */
export async function* newlineChunks(
  handle: FileHandle,
  start: number,
  end: number,
  path: string,
  chunkBytes = READ_CHUNK_BYTES,
): AsyncGenerator<{ data: Buffer; offset: number }> {
  let carry: Buffer | undefined;
  for (let at = start; at < end;) {
    const size = Math.min(chunkBytes, end - at);
    const read = whole(await readAt(handle, at, size), size, path, at);
    const data = carry ? Buffer.concat([carry, read]) : read;
    const offset = at - (carry?.length ?? 0);
    at += size;
    const last = data.lastIndexOf(10);
    if (last === -1) {
      carry = data;
      continue;
    }
    yield { data: data.subarray(0, last + 1), offset };
    carry = last + 1 < data.length ? data.subarray(last + 1) : undefined;
  }
}

const READ_CHUNK_BYTES = 256 * 1024;
