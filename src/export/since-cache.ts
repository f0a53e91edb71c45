import { rmSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { API_PREFIX, isSafeEntryName } from '../archive/paths.js';
import { openZip, type ZipReader } from '../archive/zip-reader.js';
import type { Spool } from '../storage/spool.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from '../storage/body-cache.js';
import { cachedBodyOf } from '../storage/stored-file.js';
import { readManifestFrom } from '../manifest/read-manifest.js';
import { isSameService } from '../core/service-url.js';
import type { FileEntry, PrototypeRecord } from '../manifest/types.js';
import { costTally, type PreviousCost } from '../manifest/previous-costs.js';
import { checkRecorded } from '../storage/read-verified.js';

export interface SinceCacheOptions {
  /** The service this run exports; an archive of another service is refused (its ids mean other things). */
  baseUrl?: string;
  /** Where PREV's entries wait, one file per prototype, until the crawl asks for them; a temp folder by default. */
  spillDir?: string;
}

export interface SinceCache extends BodyCache {
  /** The archive's file name, recorded as the origin of what is copied from it. */
  readonly origin: string;
  /** Prototypes of the archive with at least one usable entry. */
  readonly prototypes: number;
  /** What each prototype cost in that run, counted while its manifest streamed by (progress estimate). */
  readonly costs: PreviousCost[];
  close(): void;
}

interface PrevPrototype {
  revision: number;
  lastModification: number | null;
  /** JSON lines of the usable entries, read back when the crawl reaches this prototype. */
  spill: string;
}

/** Usable entries by API source: the archive path holds `r{rev}`, which changes, the source does not. */
type PrevFiles = Map<string, FileEntry>;

/** Prototypes whose entries are held at once: the crawl works on a few prototypes at a time. */
const LOADED_PROTOTYPES = 2;

/**
 * `export --since PREV.zip`: bodies of an earlier archive offered to the crawler in place of
 * requests. A prototype whose revision and lastModification both equal PREV's record is
 * unchanged, and its copies are used without asking; for a changed one they are only offered for
 * an If-Modified-Since request. Every copy is checked against PREV's manifest (size and sha256,
 * and the zip's CRC) while it streams into the spool; a damaged one is refused and the crawler
 * fetches the resource instead, so a damaged or partial PREV is used for what it verifiably holds.
 *
 * PREV's manifest streams by once at open: each prototype's usable entries go to a spill file of
 * their own, and a prototype's entries are loaded when the crawl first asks for one of them, so a
 * million-entry PREV costs memory for the prototypes being crawled, not for all of them.
 *
 * A PREV that cannot be read as a whole (not a zip, no readable manifest, another service) is a
 * USAGE error before any request: the user named it, and silently falling back to a full export
 * would hide why tonight's run costs a hundred times more than last night's.
 */
export async function openSinceCache(prevPath: string, spool: Spool, options: SinceCacheOptions = {}): Promise<SinceCache> {
  const origin = basename(prevPath);
  let reader: ZipReader;
  try {
    reader = await openZip(prevPath);
  } catch (error) {
    throw unusable(origin, error);
  }
  const spillDir = await mkdtemp(join(options.spillDir ?? tmpdir(), '.rabbit-since-'));
  const index = new Map<string, PrevPrototype>();
  const release = () => {
    reader.close();
    rmSync(spillDir, { recursive: true, force: true });
  };
  const tally = costTally();
  try {
    const head = await readManifestFrom(
      reader,
      {
        file: tally.visitor.file,
        error: tally.visitor.error,
        async prototype(id, record) {
          tally.visitor.prototype(id, record);
          const files = usableEntries(id, record, reader);
          if (files.length === 0) return;
          const spill = join(spillDir, `${index.size}.jsonl`);
          await writeFile(spill, files.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
          index.set(id, { revision: record.revision, lastModification: record.lastModification, spill });
        },
      },
      { keepPrototypeFiles: true },
    );
    if (options.baseUrl !== undefined && !isSameService(head.source.baseUrl, options.baseUrl)) {
      throw new RabbitError('USAGE', `--since ${origin} was exported from ${head.source.baseUrl}, not ${options.baseUrl}`);
    }
  } catch (error) {
    release();
    throw unusable(origin, error);
  }

  const loaded = new Map<string, Promise<PrevFiles>>();
  const filesOf = (id: string, prev: PrevPrototype): Promise<PrevFiles> => {
    let files = loaded.get(id);
    if (files === undefined) {
      files = readSpill(prev.spill);
      if (loaded.size >= LOADED_PROTOTYPES) loaded.delete(loaded.keys().next().value as string);
    } else loaded.delete(id);
    loaded.set(id, files);
    return files;
  };

  const load = async (entry: FileEntry): Promise<CachedBody> => {
    const stream = await reader.openEntry(entry.path);
    const body = await spool.write(stream, { maxBytes: entry.size, expectedLength: entry.size, source: entry.source });
    checkRecorded(body, entry, `${entry.path} in ${origin} does not match its sha256 in the manifest`, { source: entry.source });
    return cachedBodyOf(body, entry);
  };

  return {
    origin,
    prototypes: index.size,
    costs: tally.costs(),
    async lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
      const prev = index.get(proto.id);
      if (!prev) return undefined;
      const entry = (await filesOf(proto.id, prev)).get(source);
      if (!entry) return undefined;
      const fresh = isUnchanged(prev, proto);
      // A changed prototype's copy is only worth offering if it can be revalidated.
      if (!fresh && entry.lastModified === null) return undefined;
      return { fresh, lastModified: entry.lastModified, origin, load: () => load(entry) };
    },
    close: release,
  };
}

/** Unchanged means both the highest milestone and lastModification are the same; a null proves nothing. */
export function isUnchanged(prev: Pick<PrevPrototype, 'revision' | 'lastModification'>, now: Pick<PrototypeContext, 'revision' | 'lastModification'>): boolean {
  return prev.revision === now.revision && prev.lastModification !== null && prev.lastModification === now.lastModification;
}

/**
 * PREV's entries that can stand in for a resource: listed under the prototype's recorded revision,
 * present in the zip with the listed size, a plain name, and a source inside that same prototype
 * (a manifest must not be able to pass one prototype's body off as another's).
 */
function usableEntries(id: string, record: PrototypeRecord, reader: ZipReader): FileEntry[] {
  const bySource = new Map<string, FileEntry>();
  const ownSources = `${API_PREFIX}prototypes/${id}/`;
  for (const entry of record.revisions[String(record.revision)]?.files ?? []) {
    if (!entry.source.startsWith(ownSources) || bySource.has(entry.source) || !isSafeEntryName(entry.path)) continue;
    const info = reader.entries.get(entry.path);
    if (!info || info.uncompressedSize !== entry.size) continue;
    bySource.set(entry.source, entry);
  }
  return [...bySource.values()];
}

async function readSpill(path: string): Promise<PrevFiles> {
  const files: PrevFiles = new Map();
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line) as FileEntry;
    files.set(entry.source, entry);
  }
  return files;
}

function unusable(origin: string, error: unknown): RabbitError {
  if (error instanceof RabbitError && error.code === 'USAGE') return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RabbitError('USAGE', `--since ${origin} cannot be used: ${reason}; name an archive written by rabbit-export, or leave out --since`, {
    cause: error,
  });
}
