import type { ChunkSource } from '../core/read-chunks.js';
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
      const refs = await BodyRefs.of(`prototypes/${state.id}/r${state.revision}/`, entries, locate);
      const places = placesOf({ id: state.id, revision: state.revision, has: (rest) => refs.has(rest) });
      const texts = new ArchivedTexts(refs.source(read));
      let pending = [partHead(state.id)];
      let pendingBytes = 0;
      for await (const record of prototypeRecords(state, texts, places)) {
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

/**
 * Where each of a prototype's bodies lies in the spool, by its path: a number an entry in a Map
 * and three in arrays, rather than the manifest entry each (its hash, URL and type) the model hands
 * out. A prototype of 250,000 files was held at some 600 bytes a file as entries; this is a fifth.
 */
class BodyRefs {
  private readonly at = new Map<string, number>();
  private readonly offsets: number[] = [];
  private readonly sizes: number[] = [];
  /** Index into `files`; nearly every body is in the one pack. */
  private readonly fileIndex: number[] = [];
  private readonly files: string[] = [];

  private constructor(private readonly prefix: string) {}

  static async of(
    prefix: string,
    entries: AsyncIterable<ArchivedEntry>,
    locate: (entry: ArchivedEntry) => BodyRef,
  ): Promise<BodyRefs> {
    const refs = new BodyRefs(prefix);
    const fileAt = new Map<string, number>();
    for await (const entry of entries) {
      if (!entry.path.startsWith(prefix)) continue;
      const ref = locate(entry);
      let file = fileAt.get(ref.file);
      if (file === undefined) fileAt.set(ref.file, (file = refs.files.push(ref.file) - 1));
      // Keyed by the whole path, as parsed: a slice of it would be a second string holding the first.
      const index = refs.at.get(entry.path) ?? refs.offsets.length;
      refs.at.set(entry.path, index);
      refs.offsets[index] = ref.offset ?? -1;
      refs.sizes[index] = ref.size;
      refs.fileIndex[index] = file;
    }
    return refs;
  }

  has(rest: string): boolean {
    return this.at.has(this.prefix + rest);
  }

  ref(rest: string): BodyRef | undefined {
    const index = this.at.get(this.prefix + rest);
    if (index === undefined) return undefined;
    const offset = this.offsets[index] as number;
    const file = this.files[this.fileIndex[index] as number] as string;
    const size = this.sizes[index] as number;
    return offset === -1 ? { file, size } : { file, offset, size };
  }

  source(read: BodyReader): TextSource {
    return {
      names: () => this.names(),
      read: async (rest, maxBytes) => {
        const ref = this.ref(rest);
        return ref === undefined || ref.size > maxBytes ? undefined : read(ref);
      },
    };
  }

  private async *names(): AsyncGenerator<string> {
    for (const path of this.at.keys()) yield path.slice(this.prefix.length);
  }
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
