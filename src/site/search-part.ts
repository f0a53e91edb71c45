import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { ArchivedTexts } from '../search/archived-texts.js';
import type { PrototypeState } from '../manifest/archive-model.js';
import { MANIFEST_PATH, type FileEntry } from '../manifest/types.js';
import type { BodyReader } from '../storage/spool.js';
import type { StoredFile } from '../storage/stored-file.js';
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
 * the records `search` would read from the archive (search/prototype-records.ts), each with its
 * folded text, one a line. `files` are the prototype's stored files, element bodies and page views
 * included; `read` reads them back from the spool.
 */
export async function searchPart(
  state: PrototypeState & { complete: boolean },
  files: readonly StoredFile[],
  read: BodyReader,
): Promise<GeneratedFile> {
  const prototype = storedPrototype(state, files, read);
  const lines = [partHead(state.id)];
  for await (const record of prototypeRecords(new ArchivedTexts(prototype), placesOf(prototype)))
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

/**
 * The stored files of a prototype seen the way a reader of an archive sees them (archive-catalog.ts),
 * so that the index is made by the very code that reads an archive without one.
 */
function storedPrototype(
  state: PrototypeState & { complete: boolean },
  files: readonly StoredFile[],
  read: BodyReader,
): ArchivedPrototype {
  const prefix = `prototypes/${state.id}/r${state.revision}/`;
  const byRest = new Map<string, StoredFile>();
  for (const file of files) if (file.path.startsWith(prefix)) byRest.set(file.path.slice(prefix.length), file);
  return {
    id: state.id,
    name: state.name,
    revision: state.revision,
    lastModification: state.lastModification,
    lastUser: state.lastUser,
    complete: state.complete,
    origin: state.origin,
    milestone: state.milestone,
    hasRevision: byRest.size > 0,
    entries: byRest.size,
    has: (rest) => byRest.has(rest),
    entry: (rest) => Promise.resolve<FileEntry | undefined>(byRest.get(rest)),
    async *names() {
      yield* byRest.keys();
    },
    async read(rest, maxBytes) {
      const file = byRest.get(rest);
      if (file === undefined || file.size > maxBytes) return undefined;
      return read(file);
    },
  };
}
