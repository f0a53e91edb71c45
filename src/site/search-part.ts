import type { ChunkSource } from '../core/read-chunks.js';
import type { ArchivedEntry, PrototypeState } from '../manifest/archive-model.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { BodyReader, BodyRef } from '../storage/spool.js';
import { foldText } from '../search/fold.js';
import { prototypeRecords } from '../search/prototype-records.js';
import {
  partHead,
  PART_TAIL,
  partsFile,
  recordLine,
  SEARCH_PARTS_PATH,
  searchPartPath,
} from '../search/search-record.js';
import type { GeneratedFile } from './page-views.js';
import { BodyPlaces } from './body-places.js';
import { spooledEntries } from './spooled-entries.js';
import { placesOf } from './search-places.js';
import { revisionFolderOf } from '../api/entry-paths.js';

const JS = 'text/javascript; charset=utf-8';

/** Record lines gathered before they are handed on: the part is written as it is made, never held whole. */
export const PART_FLUSH_BYTES = 64 * 1024;

/** A generated file whose bytes are made while they are written. */
export interface GeneratedStream extends Omit<GeneratedFile, 'data'> {
  chunks: ChunkSource;
}

/**
 * A prototype's part of the archive's search index, made at export from the bodies just stored:
 * the records `search` would read from the archive without one (search/prototype-records.ts), each
 * with its folded text, one a line. `entries` are the prototype's files as the model lists them,
 * element bodies and page views included; `locate` says where each lies in the spool.
 *
 * The lines go out in chunks of about `flushBytes` as the records are made: a prototype of
 * 250,000 elements, whose part runs to tens of megabytes, costs one chunk of them in memory.
 */
export function searchPart(
  state: PrototypeState,
  entries: AsyncIterable<ArchivedEntry>,
  locate: (entry: ArchivedEntry) => BodyRef,
  read: BodyReader,
  flushBytes = PART_FLUSH_BYTES,
): GeneratedStream {
  const chunks: ChunkSource = {
    async read(onChunk) {
      const bodies = await bodiesOf(revisionFolderOf(state.id, state.revision), entries, locate);
      const places = placesOf({ id: state.id, revision: state.revision, has: (rest) => bodies.has(rest) });
      let pending = [partHead(state.id)];
      let pendingBytes = 0;
      for await (const record of prototypeRecords(state, spooledEntries(state, bodies, read), places)) {
        const line = recordLine(record, foldText(record.text));
        pending.push(line);
        // UTF-16 length: a bound on the chunk near enough, without encoding each line twice.
        pendingBytes += line.length;
        if (pendingBytes < flushBytes) continue;
        const chunk = Buffer.from(pending.join(''), 'utf8');
        pending = [];
        pendingBytes = 0;
        await onChunk(chunk);
      }
      pending.push(PART_TAIL);
      await onChunk(Buffer.from(pending.join(''), 'utf8'));
    },
  };
  return { path: searchPartPath(state.id), chunks, contentType: JS, generatedFrom: MANIFEST_PATH };
}

/** Where each of a prototype's bodies lies in the spool, by its name below its revision's folder. */
async function bodiesOf(
  prefix: string,
  entries: AsyncIterable<ArchivedEntry>,
  locate: (entry: ArchivedEntry) => BodyRef,
): Promise<BodyPlaces> {
  const places = new BodyPlaces();
  for await (const entry of entries)
    if (entry.path.startsWith(prefix)) places.set(entry.path.slice(prefix.length), locate(entry));
  return places;
}

/** The list of parts, made last: the command and the viewer's script take it to mean the archive has an index. */
export function searchParts(prototypeIds: readonly string[]): GeneratedFile {
  return {
    path: SEARCH_PARTS_PATH,
    data: Buffer.from(partsFile(prototypeIds), 'utf8'),
    contentType: JS,
    generatedFrom: MANIFEST_PATH,
  };
}
