import { basename } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { API_PREFIX, isSafeEntryName } from '../archive/paths.js';
import { openZip, type ZipReader } from '../archive/zip-reader.js';
import type { Spool } from '../storage/spool.js';
import type { BodyCache, CacheCandidate, CachedBody, PrototypeContext } from '../storage/body-cache.js';
import { readManifestFrom } from '../manifest/read-manifest.js';
import { isSameService } from '../core/service-url.js';
import type { FileEntry, Manifest } from '../manifest/types.js';

export interface SinceCacheOptions {
  /** The service this run exports; an archive of another service is refused (its ids mean other things). */
  baseUrl?: string;
}

export interface SinceCache extends BodyCache {
  /** The archive's file name, recorded as the origin of what is copied from it. */
  readonly origin: string;
  /** Prototypes of the archive with at least one usable entry. */
  readonly prototypes: number;
  close(): void;
}

interface PrevPrototype {
  revision: number;
  lastModification: number | null;
  /** Usable entries by API source: the archive path holds `r{rev}`, which changes, the source does not. */
  files: Map<string, FileEntry>;
}

/**
 * `export --since PREV.zip`: bodies of an earlier archive offered to the crawler in place of
 * requests. A prototype whose revision and lastModification both equal PREV's record is
 * unchanged, and its copies are used without asking; for a changed one they are only offered for
 * an If-Modified-Since request. Every copy is checked against PREV's manifest (size and sha256,
 * and the zip's CRC) while it streams into the spool; a damaged one is refused and the crawler
 * fetches the resource instead, so a damaged or partial PREV is used for what it verifiably holds.
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
  let index: Map<string, PrevPrototype>;
  try {
    const manifest = await readManifestFrom(reader);
    if (options.baseUrl !== undefined && !isSameService(manifest.source.baseUrl, options.baseUrl)) {
      throw new RabbitError('USAGE', `--since ${origin} was exported from ${manifest.source.baseUrl}, not ${options.baseUrl}`);
    }
    index = indexPrototypes(manifest, reader);
  } catch (error) {
    reader.close();
    throw unusable(origin, error);
  }

  const load = async (entry: FileEntry): Promise<CachedBody> => {
    const stream = await reader.openEntry(entry.path);
    const body = await spool.write(stream, { maxBytes: entry.size, expectedLength: entry.size, source: entry.source });
    if (body.sha256 !== entry.sha256) {
      throw new RabbitError('ARCHIVE_CORRUPT', `${entry.path} in ${origin} does not match its sha256 in the manifest`, {
        source: entry.source,
      });
    }
    return { sha256: body.sha256, size: body.size, file: body.file, ...(body.offset !== undefined ? { offset: body.offset } : {}), contentType: entry.contentType, lastModified: entry.lastModified };
  };

  return {
    origin,
    prototypes: index.size,
    lookup(source: string, proto: PrototypeContext): Promise<CacheCandidate | undefined> {
      const prev = index.get(proto.id);
      const entry = prev?.files.get(source);
      if (!prev || !entry) return Promise.resolve(undefined);
      const fresh = isUnchanged(prev, proto);
      // A changed prototype's copy is only worth offering if it can be revalidated.
      if (!fresh && entry.lastModified === null) return Promise.resolve(undefined);
      return Promise.resolve({ fresh, lastModified: entry.lastModified, origin, load: () => load(entry) });
    },
    close: () => reader.close(),
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
function indexPrototypes(manifest: Manifest, reader: ZipReader): Map<string, PrevPrototype> {
  const index = new Map<string, PrevPrototype>();
  for (const [id, record] of Object.entries(manifest.prototypes)) {
    const files = new Map<string, FileEntry>();
    const ownSources = `${API_PREFIX}prototypes/${id}/`;
    for (const entry of record.revisions[String(record.revision)]?.files ?? []) {
      const info = reader.entries.get(entry.path);
      if (!info || info.uncompressedSize !== entry.size || !isSafeEntryName(entry.path)) continue;
      if (!entry.source.startsWith(ownSources) || files.has(entry.source)) continue;
      files.set(entry.source, entry);
    }
    if (files.size > 0) index.set(id, { revision: record.revision, lastModification: record.lastModification, files });
  }
  return index;
}

function unusable(origin: string, error: unknown): RabbitError {
  if (error instanceof RabbitError && error.code === 'USAGE') return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new RabbitError('USAGE', `--since ${origin} cannot be used: ${reason}; name an archive written by rabbit-export, or leave out --since`, {
    cause: error,
  });
}
