import { RabbitError } from '../core/errors.js';
import { revisionFolderOf } from '../api/entry-paths.js';
import type { PrototypeEntries } from '../archive/archived-prototype-reader.js';
import type { BodyReader, BodyRef } from '../storage/spool.js';

/**
 * A prototype's bodies as the export has spooled them, by their names below the revision's folder,
 * as the entries the archive's reader of a prototype reads (archive/archived-prototype-reader.ts):
 * the overview page and the search index are made from them before the archive is written.
 */
export function spooledEntries(
  prototype: { id: string; revision: number | string },
  bodies: { get(rest: string): BodyRef | undefined; names(): Iterable<string> },
  read: BodyReader,
): PrototypeEntries {
  return {
    id: prototype.id,
    revision: prototype.revision,
    async *names() {
      yield* bodies.names();
    },
    async read(rest, maxBytes) {
      const ref = bodies.get(rest);
      if (ref === undefined) return undefined;
      if (ref.size > maxBytes) {
        const entry = revisionFolderOf(prototype.id, prototype.revision) + rest;
        throw new RabbitError(
          'BODY_TOO_LARGE',
          `${entry} holds ${ref.size} bytes, more than the ${maxBytes} read here`,
          {
            entry,
          },
        );
      }
      return read(ref);
    },
  };
}
