import type { ArchivedEntry, PrototypeState } from '../manifest/archive-model.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { BodyReader, BodyRef } from '../storage/spool.js';
import { ArchivedTexts, type TextSource } from '../search/archived-texts.js';
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
import { placesOf } from './search-places.js';

const JS = 'text/javascript; charset=utf-8';

/**
 * A prototype's part of the archive's search index, made at export from the bodies just stored:
 * the records `search` would read from the archive without one (search/prototype-records.ts), each
 * with its folded text, one a line. `entries` are the prototype's files as the model lists them,
 * element bodies and page views included; `locate` says where each lies in the spool.
 */
export async function searchPart(
  state: PrototypeState,
  entries: AsyncIterable<ArchivedEntry>,
  locate: (entry: ArchivedEntry) => BodyRef,
  read: BodyReader,
): Promise<GeneratedFile> {
  const prefix = `prototypes/${state.id}/r${state.revision}/`;
  // Only where each body lies, by its name below the revision: a prototype of 250,000 files is
  // held as that, not as its manifest entries.
  const refs = new Map<string, BodyRef>();
  const files = new Map<string, string>();
  for await (const entry of entries) {
    if (!entry.path.startsWith(prefix)) continue;
    const ref = locate(entry);
    const file = files.get(ref.file) ?? (files.set(ref.file, ref.file), ref.file);
    refs.set(entry.path.slice(prefix.length), { ...ref, file });
  }
  const source: TextSource = {
    async *names() {
      yield* refs.keys();
    },
    async read(rest, maxBytes) {
      const ref = refs.get(rest);
      return ref === undefined || ref.size > maxBytes ? undefined : read(ref);
    },
  };
  const places = placesOf({ id: state.id, revision: state.revision, has: (rest) => refs.has(rest) });
  const lines = [partHead(state.id)];
  for await (const record of prototypeRecords(state, new ArchivedTexts(source), places))
    lines.push(recordLine(record, foldText(record.text)));
  lines.push(PART_TAIL);
  return {
    path: searchPartPath(state.id),
    data: Buffer.from(lines.join(''), 'utf8'),
    contentType: JS,
    generatedFrom: MANIFEST_PATH,
  };
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
