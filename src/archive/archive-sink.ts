import { FAST_DEFLATE_LEVEL } from '../zip/entry-data.js';
import { ZipWriter, type ZipEntryMeta } from '../zip/zip-writer.js';
import { assertSafeRelative, isPngEntry } from '../api/paths.js';
import type { StoredFile } from '../storage/stored-file.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { Spool } from '../storage/spool.js';
import { EntryChannel } from './entry-channel.js';
import { readVerified } from '../storage/read-verified.js';

export interface ArchiveSinkOptions {
  spool: Spool;
  signal: AbortSignal;
  onProgress?(bytes: number, entries: number): void;
  /** Told when the writer falls behind (true) and when it has caught up again (false). */
  onBacklog?(behind: boolean): void;
}

type SinkItem = StoredFile | { manifest: AsyncIterable<string | Buffer> };

/**
 * The zip, written while the crawl runs: each body goes in as soon as it is stored, so little is
 * left to do after the last response; manifest.json comes last, streamed. A zip that cannot be
 * written (disk full) fails `written` at once, so the crawl can stop rather than finish for nothing.
 */
export class ArchiveSink {
  readonly written: Promise<{ bytes: number; entries: number }>;
  private readonly channel = new EntryChannel<SinkItem>();
  /** Bytes of bodies waiting in the channel in memory. */
  private held = 0;
  /** Entries waiting in the channel, and whether the producer has been asked to wait. */
  private waiting = 0;
  private behind = false;

  constructor(
    out: string,
    private readonly options: ArchiveSinkOptions,
  ) {
    this.written = this.write(out);
    this.written.catch(() => undefined);
  }

  add(file: StoredFile): void {
    if (++this.waiting >= BACKLOG_HIGH && !this.behind) {
      this.behind = true;
      this.options.onBacklog?.(true);
    }
    if (file.data && this.held + file.size > HELD_BYTES) {
      // The writer is behind: let it read this one back from the spool rather than hold more.
      const { data: _data, ...onDisk } = file;
      this.channel.push(onDisk);
      return;
    }
    if (file.data) this.held += file.size;
    this.channel.push(file);
  }

  /** Adds the manifest as the last entry and waits for the zip to be whole and in place. */
  finish(manifest: AsyncIterable<string | Buffer>): Promise<{ bytes: number; entries: number }> {
    this.channel.push({ manifest });
    this.channel.close();
    return this.written;
  }

  /** Gives up: the writer removes its temp files and nothing appears at the output. */
  async fail(error: unknown): Promise<void> {
    this.channel.fail(error);
    await this.written.catch(() => undefined);
  }

  private async write(out: string): Promise<{ bytes: number; entries: number }> {
    const zip = await ZipWriter.create(out, { signal: this.options.signal, checkName: assertSafeRelative });
    try {
      for (;;) {
        const next = this.channel.next();
        const item = next instanceof Promise ? await next : next;
        if (item === undefined) break;
        if ('manifest' in item) await zip.addStream({ name: MANIFEST_PATH, level: FAST_DEFLATE_LEVEL }, item.manifest);
        else {
          await this.addBody(zip, item);
          if (--this.waiting <= BACKLOG_LOW && this.behind) {
            this.behind = false;
            this.options.onBacklog?.(false);
          }
        }
        this.options.onProgress?.(zip.bytes, zip.entries);
      }
      return await zip.finish();
    } catch (error) {
      await zip.abort();
      throw error;
    }
  }

  /**
   * A body still in memory goes in as it is (hashed as it arrived, never on disk since); a small
   * one read back from the spool is checked against its sha256 first (a spool file damaged since
   * it was written must not reach the archive); a large one streams from its own file.
   */
  private async addBody(zip: ZipWriter, file: StoredFile): Promise<void> {
    const meta: ZipEntryMeta = { name: file.path, store: isStoredAsIs(file), ...entryDate(file.lastModified) };
    if (file.generatedFrom !== undefined) meta.level = FAST_DEFLATE_LEVEL;
    if (file.data) {
      this.held -= file.size;
      return zip.addBuffer(meta, file.data);
    }
    if (file.offset === undefined && file.size > INLINE_ENTRY_BYTES)
      return zip.addFile(meta, { file: file.file, size: file.size });
    const data = await readVerified(
      this.options.spool.read(file),
      file,
      `the saved body of ${file.source} was damaged on disk before it could be archived; run the export again`,
    );
    return zip.addBuffer(meta, data);
  }
}

/**
 * Entries waiting for the writer at which the crawl is asked to pause, and at which it resumes:
 * without this, a crawl faster than deflate (copies from --since, a fast service) would queue a
 * record per resource in memory.
 */
const BACKLOG_HIGH = 4096;
const BACKLOG_LOW = 1024;

/** Bodies held in memory for the writer at most; beyond, it reads them back from the spool. */
const HELD_BYTES = 4 * 1024 * 1024;

/** Entries up to this size are read whole and verified while the archive is written. */
const INLINE_ENTRY_BYTES = 1024 * 1024;

/**
 * Bodies shorter than this are stored, not deflated. Most of an account is element metadata of
 * about 120 bytes: deflate saves a few bytes of each, next to the headers every entry needs
 * anyway, and was the largest single item of the exporter's CPU per request in a profile
 * (docs/design.md, "Per request, only what the archive needs").
 */
export const DEFLATE_FROM_BYTES = 256;

/** PNG is already compressed: store it as served rather than deflate it again; tiny bodies too. */
function isStoredAsIs(file: StoredFile): boolean {
  return file.size < DEFLATE_FROM_BYTES || file.contentType.startsWith('image/png') || isPngEntry(file);
}

function entryDate(lastModified: string | null): { date?: Date } {
  if (!lastModified) return {};
  // Most of a prototype's bodies carry the same Last-Modified: parse each distinct one once.
  if (lastModified !== lastDate.text) {
    const ms = Date.parse(lastModified);
    // Zip dates start in 1980; anything earlier (or unparseable) keeps the writer's fixed default.
    lastDate = {
      text: lastModified,
      value: Number.isNaN(ms) || ms < Date.UTC(1980, 0, 2) ? {} : { date: new Date(ms) },
    };
  }
  return lastDate.value;
}

let lastDate: { text: string | null; value: { date?: Date } } = { text: null, value: {} };
