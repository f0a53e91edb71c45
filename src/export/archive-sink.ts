import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { RabbitError } from '../core/errors.js';
import { writeZip, type WriteZipResult, type ZipSource } from '../archive/zip-writer.js';
import type { StoredFile } from '../manifest/archive-model.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { Spool } from '../storage/spool.js';
import { EntryChannel } from './entry-channel.js';

export interface ArchiveSinkOptions {
  spool: Spool;
  /** Where manifest.json is put together before it goes into the zip. */
  manifestPath: string;
  signal: AbortSignal;
  onProgress?(bytes: number, entries: number): void;
}

/**
 * The zip, written while the crawl runs: each body goes in as soon as it is stored, so little is
 * left to do after the last response; manifest.json comes last. A zip that cannot be written
 * (disk full) fails `written` at once, so the crawl can stop rather than finish for nothing.
 */
export class ArchiveSink {
  readonly written: Promise<WriteZipResult>;
  private readonly channel = new EntryChannel<StoredFile | { manifest: string }>();
  /** Bytes of bodies waiting in the channel in memory. */
  private held = 0;

  constructor(out: string, private readonly options: ArchiveSinkOptions) {
    this.written = writeZip(this.sources(), out, {
      signal: options.signal,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    this.written.catch(() => undefined);
  }

  add(file: StoredFile): void {
    if (file.data && this.held + file.size > HELD_BYTES) {
      // The writer is behind: let it read this one back from the spool rather than hold more.
      const { data: _data, ...onDisk } = file;
      this.channel.push(onDisk);
      return;
    }
    if (file.data) this.held += file.size;
    this.channel.push(file);
  }

  /** Streams the manifest to disk, adds it as the last entry and waits for the zip to be whole. */
  async finish(manifest: AsyncIterable<string>): Promise<WriteZipResult> {
    const out = createWriteStream(this.options.manifestPath);
    for await (const chunk of manifest) {
      if (!out.write(chunk)) await Promise.race([new Promise<void>((resolve) => out.once('drain', () => resolve())), finished(out)]);
    }
    out.end();
    await finished(out);
    this.channel.push({ manifest: this.options.manifestPath });
    this.channel.close();
    return this.written;
  }

  /** Gives up: the writer removes its temp file and nothing appears at the output. */
  async fail(error: unknown): Promise<void> {
    this.channel.fail(error);
    await this.written.catch(() => undefined);
  }

  /**
   * Small bodies are read whole and checked against their sha256 on the way (a spool file damaged
   * since it was written must not reach the archive); large ones stream from their own file.
   */
  private async *sources(): AsyncGenerator<ZipSource> {
    for await (const file of this.channel) {
      if ('manifest' in file) {
        yield { name: MANIFEST_PATH, file: file.manifest, store: false };
        continue;
      }
      const base = { name: file.path, store: isStoredAsIs(file), ...entryDate(file.lastModified) };
      if (file.offset === undefined && file.size > INLINE_ENTRY_BYTES) {
        yield { ...base, file: file.file };
        continue;
      }
      if (file.data) {
        this.held -= file.size;
        // Hashed as it arrived, and never left memory since.
        yield { ...base, data: file.data };
        continue;
      }
      const data = await this.options.spool.read(file);
      if (createHash('sha256').update(data).digest('hex') !== file.sha256) {
        throw new RabbitError('ARCHIVE_CORRUPT', `the saved body of ${file.source} was damaged on disk before it could be archived; run the export again`);
      }
      yield { ...base, data };
    }
  }
}

/** Bodies held in memory for the writer at most; beyond, it reads them back from the spool. */
const HELD_BYTES = 16 * 1024 * 1024;

/** Entries up to this size are read whole and verified while the archive is written. */
const INLINE_ENTRY_BYTES = 1024 * 1024;

/** PNG is already compressed: store it as served rather than deflate it again. */
function isStoredAsIs(file: StoredFile): boolean {
  return file.contentType.startsWith('image/png') || file.path.endsWith('.png');
}

function entryDate(lastModified: string | null): { date?: Date } {
  if (!lastModified) return {};
  const ms = Date.parse(lastModified);
  // Zip dates start in 1980; anything earlier (or unparseable) keeps the writer's fixed default.
  return Number.isNaN(ms) || ms < Date.UTC(1980, 0, 2) ? {} : { date: new Date(ms) };
}
