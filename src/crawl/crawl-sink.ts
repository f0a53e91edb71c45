import type { RabbitError } from '../core/errors.js';
import type { Milestone } from '../api/revision.js';
import type { PrototypeContext } from '../storage/body-cache.js';
import type { StoredFile } from '../storage/stored-file.js';

/** What a prototype's metadata says beyond its context (id, key, revision, last modification). */
export interface PrototypeDetails {
  lastUser: string | null;
  milestone: Milestone | null;
}

/**
 * Where the crawl puts what it finds. The crawl decides what to fetch and in which order; what
 * becomes of a body, an error or a milestone (an archive's manifest, progress events, the viewer)
 * is the caller's, so the crawl knows nothing of the archive it feeds.
 */
export interface CrawlSink {
  /** A prototype's metadata was read: its revision is known and its files follow. */
  prototype(prototype: PrototypeContext, name: string | null, details: PrototypeDetails): void;
  /**
   * A body was stored; `reusedFrom` names where a copy came from when none was downloaded. The
   * body belongs to `prototype`, or to the account when undefined (the prototype lists).
   */
  stored(file: StoredFile, prototype: PrototypeContext | undefined, reusedFrom: string | undefined): void;
  /** A resource failed for good (a resource-class error): the run goes on without it. */
  failed(source: string, error: RabbitError): void;
  /** The service does not offer this resource (an older page view answered 404): not an error. */
  notOffered(source: string, status: number): void;
  /** The prototypes this crawl will walk, once the lists are read (for estimating the whole). */
  listed(ids: string[]): void;
  /** A prototype's list of pages was read: how many pages it has. */
  pagesListed(id: string, count: number): void;
  /** A prototype's last task has finished. */
  prototypeDone(id: string): void;
}
