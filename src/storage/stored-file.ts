import type { StoredFile } from '../manifest/archive-model.js';
import type { CachedBody } from './body-cache.js';
import type { BodyRef } from './spool.js';

/**
 * The records a spooled body becomes, built in one place so a fetch, a reused copy, a page asset
 * and a generated viewer page carry the same fields: where the body lies in the spool, its hash,
 * and how it was served. Nothing else is copied (not the spool's in-memory buffer, not a cache's
 * bookkeeping), so a record kept for the whole run holds no bytes unless asked to.
 */
export function cachedBodyOf(body: BodyRef & { sha256: string }, served: { contentType: string; lastModified: string | null }): CachedBody {
  return {
    sha256: body.sha256,
    size: body.size,
    file: body.file,
    ...(body.offset !== undefined ? { offset: body.offset } : {}),
    contentType: served.contentType,
    lastModified: served.lastModified,
  };
}

/** A body as the archive lists it: `data` only when given (bytes in memory save a read at zip time). */
export function storedFileOf(
  entry: { path: string; source: string; generatedFrom?: string },
  body: CachedBody & { data?: Buffer },
): StoredFile {
  return {
    path: entry.path,
    source: entry.source,
    ...cachedBodyOf(body, body),
    ...(entry.generatedFrom !== undefined ? { generatedFrom: entry.generatedFrom } : {}),
    ...(body.data ? { data: body.data } : {}),
  };
}
