import type { BodyRef } from './spool.js';

// What the crawl asks of a copy an earlier run left (this output's journal, or the archive given to
// --since): storage implements it, the crawl consumes it.

/** The prototype a resource belongs to, as known once its metadata has been read. */
export interface PrototypeContext {
  id: string;
  key: string;
  revision: number;
  lastModification: number | null;
}

/** A body in the spool, ready to be archived. */
export interface CachedBody extends BodyRef {
  sha256: string;
  contentType: string;
  lastModified: string | null;
  /** How many API keys were replaced in the body as served (see FileEntry). */
  keyRedactions?: number;
  /** When it was fetched, where known (see FileEntry). */
  fetchedAt?: string;
}

/**
 * A copy of a resource from an earlier run (a resumed run's journal, or the archive given to
 * --since) that may stand in for a request.
 */
export interface CacheCandidate {
  /** True when the copy may be used without asking (the prototype is unchanged). */
  fresh: boolean;
  /** Last-Modified of the copy, for an If-Modified-Since request when it is not fresh. */
  lastModified: string | null;
  /** Where it comes from, for the manifest (an archive's file name), if not this run's journal. */
  origin?: string;
  /** Its size as recorded where it lies, known before a byte of it is read: held to tonight's cap. */
  size: number;
  /** Puts the copy into the spool, verified against its sha256; rejects when it is damaged. */
  load(): Promise<CachedBody>;
}

export interface BodyCache {
  lookup(source: string, prototype: PrototypeContext): Promise<CacheCandidate | undefined>;
}

/** Several caches asked in order (the newest first); the first with a candidate answers. */
export function firstCandidate(caches: readonly (BodyCache | undefined)[]): BodyCache {
  return {
    async lookup(source, proto) {
      for (const cache of caches) {
        const candidate = await cache?.lookup(source, proto);
        if (candidate) return candidate;
      }
      return undefined;
    },
  };
}
