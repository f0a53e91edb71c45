import { basename } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { streamChunks } from '../core/read-chunks.js';
import { archivePathFor, isSafeEntryName } from '../api/paths.js';
import { openArchive, type Archive } from './open-archive.js';
import type { ArchiveCatalog } from './archive-catalog.js';
import type { Spool } from '../storage/spool.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from '../storage/body-cache.js';
import { cachedBodyOf } from '../storage/stored-file.js';
import { isSameService } from '../api/service-url.js';
import { prototypeSourceFolderOf } from '../api/entry-paths.js';
import { isSafeSegment } from '../api/reader-names.js';
import type { FileEntry } from '../manifest/types.js';
import { costTally, type PreviousCost } from '../manifest/previous-costs.js';
import { checkRecorded } from '../storage/read-verified.js';

export interface SinceCacheOptions {
  /** The service this run exports; an archive of another service is refused (its ids mean other things). */
  baseUrl?: string;
  /** Where what PREV's manifest says of its entries waits until the crawl asks for them; a temp folder by default. */
  spillDir?: string;
}

export interface SinceCache extends BodyCache {
  /** The archive's file name, recorded as the origin of what is copied from it. */
  readonly origin: string;
  /** Prototypes of the archive with at least one usable entry. */
  readonly prototypes: number;
  /** What each prototype cost in that run, counted while its manifest streamed by (progress estimate). */
  readonly costs: PreviousCost[];
  /** Lets go of PREV and what was read of it (its index, a few MB at a million entries); again is harmless. */
  close(): void;
}

interface PrevPrototype {
  revision: number;
  lastModification: number | null;
}

/**
 * `export --since PREV.zip`: bodies of an earlier archive offered to the crawler in place of
 * requests. A prototype whose revision and lastModification both equal PREV's record is
 * unchanged, and its copies are used without asking; for a changed one they are only offered for
 * an If-Modified-Since request. Every copy is checked against PREV's manifest (size and sha256,
 * and the zip's CRC) while it streams into the spool; a damaged one is refused and the crawler
 * fetches the resource instead, so a damaged or partial PREV is used for what it verifiably holds.
 *
 * PREV's manifest streams by once at open. A resource's entry in PREV is where the exporter puts
 * it, `archivePathFor(source, revision)`, so the zip's own compact index finds it by source; what
 * only the manifest knows of it (sha256, content type, Last-Modified) goes to a spill file, and
 * memory keeps four bytes per zip entry saying where: a million-entry PREV costs a few MB, and the
 * crawl may visit its prototypes in any order without reading anything twice.
 *
 * A PREV that cannot be read as a whole (not a zip, no readable manifest, another service) is a
 * USAGE error before any request: the user named it, and silently falling back to a full export
 * would hide why tonight's run costs a hundred times more than last night's.
 */
export async function openSinceCache(
  prevPath: string,
  spool: Spool,
  options: SinceCacheOptions = {},
): Promise<SinceCache> {
  const origin = basename(prevPath);
  let archive: Archive;
  try {
    archive = await openArchive(prevPath);
  } catch (error) {
    throw unusable(origin, error);
  }
  const prototypes = new Map<string, PrevPrototype>();
  const tally = costTally();
  let catalog: ArchiveCatalog;
  try {
    catalog = await archive.catalog({
      visitor: tally.visitor,
      accept: usable,
      ...(options.spillDir !== undefined ? { spillDir: options.spillDir } : {}),
    });
  } catch (error) {
    archive.close();
    throw unusable(origin, error);
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    archive.close();
    void catalog.close();
  };
  if (options.baseUrl !== undefined && !isSameService(catalog.head.source.baseUrl, options.baseUrl)) {
    release();
    throw new RabbitError(
      'USAGE',
      `--since ${origin} was exported from ${catalog.head.source.baseUrl}, not ${options.baseUrl}`,
      { data: { next: otherServiceNext(options.baseUrl) } },
    );
  }
  for (const id of catalog.prototypeIds()) {
    const prototype = catalog.prototype(id);
    if (prototype !== undefined && prototype.entries > 0)
      prototypes.set(id, { revision: prototype.revision, lastModification: prototype.lastModification });
  }

  const load = async (entry: FileEntry): Promise<CachedBody> => {
    const stream = await archive.zip.openEntry(entry.path);
    const body = await spool.write(streamChunks(stream), {
      maxBytes: entry.size,
      expectedLength: entry.size,
      source: entry.source,
    });
    checkRecorded(body, entry, `${entry.path} in ${origin} does not match its sha256 in the manifest`, {
      source: entry.source,
    });
    return cachedBodyOf(body, entry);
  };

  return {
    origin,
    prototypes: prototypes.size,
    costs: tally.costs(),
    async lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
      const prev = released ? undefined : prototypes.get(proto.id);
      // Only a source inside the prototype: PREV must not pass one prototype's body off as another's.
      if (!prev || !source.startsWith(prototypeSourceFolderOf(proto.id))) return undefined;
      const path = pathIn(source, prev.revision);
      const entry = path === undefined ? undefined : await catalog.entry(path);
      if (entry === undefined) return undefined;
      const fresh = isUnchanged(prev, proto);
      // A changed prototype's copy is only worth offering if it can be revalidated.
      if (!fresh && entry.lastModified === null) return undefined;
      // entry.size is the zip's own for it (see usable), and load() stops at it.
      return { fresh, lastModified: entry.lastModified, origin, size: entry.size, load: () => load(entry) };
    },
    close: release,
  };
}

/** Unchanged means both the highest milestone and lastModification are the same; a null proves nothing. */
export function isUnchanged(
  prev: Pick<PrevPrototype, 'revision' | 'lastModification'>,
  now: Pick<PrototypeContext, 'revision' | 'lastModification'>,
): boolean {
  return (
    prev.revision === now.revision && prev.lastModification !== null && prev.lastModification === now.lastModification
  );
}

/**
 * Whether a PREV entry can stand in for its resource: listed under its own prototype, at the path
 * the exporter gives its source under that revision (a plain name), and present in the zip with
 * the listed size. Whether that revision is the one the prototype records is known only at its
 * end; lookups ask for the recorded one's paths alone.
 */
function usable(entry: FileEntry, owner: { prototype: string; revision: string }, zipSize: number): boolean {
  if (!isSafeSegment(owner.prototype) || !entry.source.startsWith(prototypeSourceFolderOf(owner.prototype)))
    return false;
  if (pathIn(entry.source, Number(owner.revision)) !== entry.path || !isSafeEntryName(entry.path)) return false;
  return zipSize === entry.size;
}

/** Where the exporter archives `source` under `revision`; undefined for a source it would refuse. */
function pathIn(source: string, revision: number): string | undefined {
  try {
    return archivePathFor(source, revision);
  } catch {
    return undefined;
  }
}

function unusable(origin: string, error: unknown): RabbitError {
  if (error instanceof RabbitError && error.code === 'USAGE') return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RabbitError(
    'USAGE',
    `--since ${origin} cannot be used: ${reason}; name an archive written by rabbit-export, or leave out --since`,
    {
      cause: error,
    },
  );
}

/** The way out when --since names an archive of another service: one of this service, or none. */
function otherServiceNext(baseUrl: string): string {
  return (
    `give --since an archive exported from ${baseUrl}, or run without --since for a full export ` +
    '(an archive of another service tells nothing of what changed in this one)'
  );
}
