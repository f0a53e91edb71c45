import type { FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { BatchedFile } from './batched-file.js';
import { copyStored, deflateBuffer, deflateStream, readRange } from './entry-data.js';
import { interrupted, outputError, syncDirectory, tempPathFor, unreadable } from '../core/output-file.js';
import { createPrivateFile } from '../core/private-files.js';
import { unsafeNameReason } from './zip-names.js';
import { ZipNameTable } from './zip-name-table.js';
import {
  METHOD_DEFLATE,
  METHOD_STORE,
  ZIP64_LIMIT,
  centralHeaderBytes,
  dosDateTime,
  encodeEndRecords,
} from './zip-records.js';
import {
  encodeLocalHeader,
  localHeaderBytes,
  writeCentralHeader,
  writeLocalHeader,
  type EntryRecord,
} from './zip-records.js';

export interface ZipEntryMeta {
  /** Entry name inside the zip: unique in the archive, and passing the name checks (ZipWriterOptions). */
  name: string;
  date?: Date;
  /** True to store without compression (PNG: already compressed, and byte offsets stay simple). */
  store: boolean;
  /** zlib level for a deflated entry; DEFLATE_LEVEL (6) when absent. */
  level?: number;
}

export interface ZipWriterOptions {
  signal?: AbortSignal;
  /**
   * A stricter rule for entry names than the zip's own (zip-names.ts, which always applies): it
   * throws to refuse a name, and a refused name leaves the writer usable.
   */
  checkName?: (name: string) => void;
}

/**
 * Entry date when the caller gives none. A fixed date, not "now": rebuilding an archive from the
 * same entries must give the same bytes, so a checksum of the zip means something.
 */
export const DEFAULT_ENTRY_DATE = new Date(Date.UTC(2000, 0, 1, 0, 0, 0));

/**
 * Entries of unknown length, and files above this size, get a zip64 extra in their local header
 * before their data is written: deflate can make incompressible data a little larger, and the
 * header cannot grow once data follows it. 3.75 GiB leaves room for that growth.
 */
const ZIP64_RESERVE_ABOVE = 0xf000_0000;

type State = 'open' | 'busy' | 'failed' | 'finished';

/**
 * Writes a zip entry by entry into a temp file beside the destination, then publishes it
 * atomically: `destPath` is either the old file or a complete, fsynced archive.
 *
 * Every local header carries the entry's CRC-32 and sizes (no data descriptors), so streaming
 * readers work. Data that is not in memory is written after a header with placeholders, which is
 * then rewritten in place: the output is a seekable file, so nothing is read twice. The central
 * directory goes to a spill file as the entries are written and is appended at `finish`, so
 * memory stays flat however many entries there are. Callers await each add before the next.
 */
export class ZipWriter {
  private readonly names = new ZipNameTable();
  private count = 0;
  private state: State = 'open';
  private failure: unknown;
  private cleanup: Promise<void> | undefined;

  private constructor(
    private readonly target: string,
    private readonly temp: string,
    private readonly spillPath: string,
    private readonly out: BatchedFile,
    private readonly central: BatchedFile,
    private readonly signal: AbortSignal | undefined,
    private readonly checkName: ((name: string) => void) | undefined,
  ) {}

  static async create(destPath: string, options: ZipWriterOptions = {}): Promise<ZipWriter> {
    const { signal, checkName } = options;
    const target = resolve(destPath);
    if (signal?.aborted) throw interrupted(signal);
    const temp = tempPathFor(target);
    const spill = tempPathFor(target);
    let zip: FileHandle | undefined;
    try {
      // What a zip holds may be private: the user's alone (0600) whatever the umask, set on the open file.
      zip = await createPrivateFile(temp);
      const directory = await createPrivateFile(spill, constants.O_RDWR);
      return new ZipWriter(target, temp, spill, new BatchedFile(zip), new BatchedFile(directory), signal, checkName);
    } catch (error) {
      if (zip) {
        await zip.close().catch(() => undefined);
        await unlink(temp).catch(() => undefined);
      }
      throw outputError(error, target);
    }
  }

  /** Archive bytes so far (the central directory is added at `finish`). */
  get bytes(): number {
    return this.out.size;
  }

  get entries(): number {
    return this.count;
  }

  addBuffer(meta: ZipEntryMeta, data: Buffer): Promise<void> {
    return this.add(meta, async (entry) => {
      const body = meta.store ? data : deflateBuffer(data, meta.level);
      entry.method = meta.store ? METHOD_STORE : METHOD_DEFLATE;
      entry.crc = crc32(data);
      entry.size = data.length;
      entry.compressedSize = body.length;
      entry.zip64Local = data.length >= ZIP64_LIMIT || body.length >= ZIP64_LIMIT;
      await this.out.put(localHeaderBytes(entry), (target, at) => writeLocalHeader(entry, target, at));
      await this.out.append(body);
    });
  }

  addFile(meta: ZipEntryMeta, source: { file: string; offset?: number; size: number }): Promise<void> {
    const { file, offset = 0, size } = source;
    return this.add(meta, async (entry) => {
      if (!Number.isSafeInteger(size) || size < 0 || !Number.isSafeInteger(offset) || offset < 0) {
        throw new RangeError(`addFile ${meta.name}: offset ${offset} and size ${size} must be whole numbers >= 0`);
      }
      entry.method = meta.store ? METHOD_STORE : METHOD_DEFLATE;
      entry.zip64Local = size > ZIP64_RESERVE_ABOVE;
      const input = await open(file, 'r').catch((error: unknown) => {
        throw unreadable(file, meta.name, error);
      });
      try {
        await this.out.append(encodeLocalHeader(entry));
        const range = { file, offset, size, entry: meta.name };
        const written = meta.store
          ? await copyStored(this.out, input, range, this.signal)
          : await deflateStream(this.out, readRange(input, range), this.signal, meta.level);
        await this.patchLocalHeader(Object.assign(entry, written));
      } finally {
        await input.close().catch(() => undefined);
      }
    });
  }

  addStream(meta: Omit<ZipEntryMeta, 'store'>, chunks: AsyncIterable<Buffer | string>): Promise<void> {
    return this.add(meta, async (entry) => {
      entry.method = METHOD_DEFLATE;
      // Its length is known only at the end, and a manifest of a million resources is large.
      entry.zip64Local = true;
      await this.out.append(encodeLocalHeader(entry));
      await this.patchLocalHeader(Object.assign(entry, await deflateStream(this.out, chunks, this.signal, meta.level)));
    });
  }

  /** Central directory, zip64 end records when needed, fsync, atomic rename into place. */
  async finish(): Promise<{ bytes: number; entries: number }> {
    this.enter();
    try {
      this.checkSignal();
      await this.central.flush();
      const directoryOffset = this.out.size;
      const directoryBytes = this.central.size;
      for (let done = 0; done < directoryBytes;) {
        this.checkSignal();
        const chunk = await this.out.appendFrom(directoryBytes - done, async (target) => {
          const { bytesRead } = await this.central.handle.read(target, 0, target.length, done);
          if (bytesRead === 0) throw new Error('the central directory spill file is shorter than written');
          return bytesRead;
        });
        done += chunk.length;
      }
      await this.out.append(encodeEndRecords(this.count, directoryOffset, directoryBytes));
      await this.out.flush();
      await this.out.handle.sync();
      await this.out.handle.close();
      await this.central.handle.close();
      await unlink(this.spillPath);
      await rename(this.temp, this.target);
      await syncDirectory(dirname(this.target));
      this.state = 'finished';
      return { bytes: this.out.size, entries: this.count };
    } catch (error) {
      throw await this.fail(error);
    }
  }

  /** Removes the temp files; safe to call after a failure, and more than once. */
  async abort(): Promise<void> {
    if (this.state === 'finished') return;
    if (this.state !== 'failed') {
      this.state = 'failed';
      this.failure ??= interrupted(this.signal);
    }
    this.cleanup ??= (async () => {
      await this.out.handle.close().catch(() => undefined);
      await this.central.handle.close().catch(() => undefined);
      await unlink(this.temp).catch(() => undefined);
      await unlink(this.spillPath).catch(() => undefined);
    })();
    await this.cleanup;
  }

  /**
   * One entry: checks its name, lets `write` put its local header and data at the current end,
   * then records its central directory header. A refused name leaves the writer usable; any
   * failure after that has left a partial entry behind, so the writer removes its files.
   */
  private async add(meta: Omit<ZipEntryMeta, 'store'>, write: (entry: EntryRecord) => Promise<void>): Promise<void> {
    this.enter();
    let refusal: unknown;
    try {
      this.checkSignal();
      refusal = this.nameRefusal(meta.name);
      if (refusal !== undefined) throw refusal;
      const name = Buffer.from(meta.name, 'utf8');
      const hash = ZipNameTable.hash(name);
      // No candidate (the usual answer) is known without a read or an await.
      if (
        this.names.candidates(hash).length > 0 &&
        (await this.names.contains(name, hash, (offset, length) => this.central.readAt(offset, length)))
      ) {
        refusal = new RabbitError('DUPLICATE_ENTRY', `refusing to archive ${JSON.stringify(meta.name)} twice`, {
          source: meta.name,
        });
        throw refusal;
      }
      const { time, date } = this.dosDate(meta.date ?? DEFAULT_ENTRY_DATE);
      const entry: EntryRecord = {
        name,
        method: METHOD_STORE,
        time,
        date,
        crc: 0,
        compressedSize: 0,
        size: 0,
        offset: this.out.size,
        zip64Local: false,
      };
      await write(entry);
      const directoryOffset = this.central.size;
      await this.central.put(centralHeaderBytes(entry), (target, at) => writeCentralHeader(entry, target, at));
      // abort() may have run meanwhile, without this entry's writes noticing (all in the batch).
      if (this.state !== 'busy') throw this.failure;
      this.names.add(hash, directoryOffset);
      this.count += 1;
      this.state = 'open';
    } catch (error) {
      // A refused entry has written nothing.
      if (refusal !== undefined && error === refusal) {
        this.state = 'open';
        throw error;
      }
      throw await this.fail(error);
    }
  }

  /** Why `name` may not go into the zip (the caller's rule, then the zip's own), or undefined. */
  private nameRefusal(name: string): unknown {
    try {
      this.checkName?.(name);
    } catch (error) {
      return error;
    }
    const reason = unsafeNameReason(name);
    if (reason === undefined) return undefined;
    return new RabbitError('BAD_ID', `refusing to archive ${JSON.stringify(name)}: ${reason}`, { source: name });
  }

  /** Most entries share a date (their prototype's Last-Modified): encode each distinct one once. */
  private dosDate(when: Date): { time: number; date: number } {
    const ms = when.getTime();
    if (ms !== this.lastDate.ms) this.lastDate = { ms, encoded: dosDateTime(when) };
    return this.lastDate.encoded;
  }

  private lastDate = { ms: NaN, encoded: { time: 0, date: 0 } };

  private enter(): void {
    if (this.state === 'busy') throw new Error('ZipWriter: await each call before making the next');
    if (this.state === 'failed') throw this.failure;
    if (this.state === 'finished') throw new Error('ZipWriter: the archive is already finished');
    this.state = 'busy';
  }

  /** Marks the writer dead, removes its files, and returns the error to throw. */
  private async fail(error: unknown): Promise<unknown> {
    // abort() during a call closes the files under it: report the abort, not the closed file.
    if (this.state === 'failed') {
      await this.abort();
      return this.failure;
    }
    const mapped =
      this.signal?.aborted && !isRabbitError(error) ? interrupted(this.signal) : outputError(error, this.target);
    this.state = 'failed';
    this.failure = mapped;
    await this.abort();
    return mapped;
  }

  private checkSignal(): void {
    if (this.signal?.aborted) throw interrupted(this.signal);
  }

  private async patchLocalHeader(entry: EntryRecord): Promise<void> {
    await this.out.writeAt(entry.offset, encodeLocalHeader(entry));
  }
}
