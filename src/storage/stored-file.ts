import type { FileEntry } from './file-entry.js';
import type { CachedBody } from './body-cache.js';
import type { BodyRef } from './spool.js';
import type { ParsedPath } from '../api/entry-paths.js';

/** A file entry and where its bytes wait on disk until the zip is written. */
export interface StoredFile extends FileEntry {
  file: string;
  /** Set when the body is `size` bytes at this offset of the spool's pack file. */
  offset?: number;
  /** The bytes themselves while still in memory (a small body just downloaded): saves a read. */
  data?: Buffer;
  /**
   * What the entry name is (its kind and ids), when the crawl built the name from them: the model
   * and the viewer read it rather than parse the name again, once per stage, for every resource.
   * Never written anywhere; a file read back from the model or an archive has none.
   */
  parsed?: ParsedPath;
}

/**
 * The records a spooled body becomes, built in one place so a fetch, a reused copy, a page asset
 * and a generated viewer page carry the same fields: where the body lies in the spool, its hash,
 * and how it was served. Nothing else is copied (not the spool's in-memory buffer, not a cache's
 * bookkeeping), so a record kept for the whole run holds no bytes unless asked to.
 */
export function cachedBodyOf(
  body: BodyRef & { sha256: string },
  served: { contentType: string; lastModified: string | null; keyRedactions?: number; fetchedAt?: string },
): CachedBody {
  const cached: CachedBody = {
    sha256: body.sha256,
    size: body.size,
    file: body.file,
    contentType: served.contentType,
    lastModified: served.lastModified,
  };
  if (body.offset !== undefined) cached.offset = body.offset;
  if (served.keyRedactions) cached.keyRedactions = served.keyRedactions;
  if (served.fetchedAt !== undefined) cached.fetchedAt = served.fetchedAt;
  return cached;
}

/** A body as the archive lists it: `data` only when given (bytes in memory save a read at zip time). */
export function storedFileOf(
  entry: { path: string; source: string; generatedFrom?: string; parsed?: ParsedPath },
  body: CachedBody & { data?: Buffer },
): StoredFile {
  const file: StoredFile = {
    path: entry.path,
    source: entry.source,
    sha256: body.sha256,
    size: body.size,
    file: body.file,
    contentType: body.contentType,
    lastModified: body.lastModified,
  };
  if (body.offset !== undefined) file.offset = body.offset;
  if (entry.generatedFrom !== undefined) file.generatedFrom = entry.generatedFrom;
  if (body.keyRedactions) file.keyRedactions = body.keyRedactions;
  if (body.fetchedAt !== undefined) file.fetchedAt = body.fetchedAt;
  if (body.data) file.data = body.data;
  if (entry.parsed !== undefined) file.parsed = entry.parsed;
  return file;
}
