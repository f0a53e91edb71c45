import type { Readable } from 'node:stream';
import { compareIds } from '../api/ids.js';
import { parseRevisionEntry, revisionEntryPrefix } from '../api/entry-paths.js';
import { isSafeSegment, revisionEntryNameOf, revisionFolderOf } from '../api/reader-names.js';
import { standalone } from '../core/standalone-string.js';
import { RabbitError } from '../core/errors.js';
import type { FileOwner } from '../manifest/manifest-stream.js';
import type { FileEntry, PrototypeRecord } from '../manifest/types.js';
import { readVerified } from '../storage/read-verified.js';
import type { HeldPrototype } from '../site/archive-data.js';
import type { ZipReader } from '../zip/zip-reader.js';
import type { EntryDigests } from './entry-digests.js';

/** What `view` knows of a prototype for its own pages: the manifest's record and its recorded revision's entries. */
export interface ViewedPrototype {
  id: string;
  revision: number;
  /** What the manifest says: false when the export could not fetch all of it. */
  complete: boolean;
  /** How many entries the manifest lists under the recorded revision's folder, and the zip holds. */
  entries: number;
  /** Its entries as the overview reads them, checked against the manifest as they are read. */
  held(): HeldPrototype;
}

/**
 * The prototypes of an archive as `view` renders index.html and the overview pages from them,
 * filed as the manifest streams by at start, beside the entries' digests (entry-digests.ts) and
 * from the same lookup of each entry: a small record per prototype, one byte per zip entry (whether
 * it is listed under its own prototype's revision folder, as every reader of a revision takes its
 * entries) and the names of its pages' and discussions' entries, the only ones the overview finds
 * by name. Nothing else per entry: an entry is found again through the zip's index, and its
 * digest and size are the ones the server checks every entry against.
 */
export class ViewedPrototypes {
  private readonly owned: Uint8Array;
  private readonly records = new Map<string, { revision: number; complete: boolean }>();
  /** By revision folder: how many entries are filed under it, and the names of those the reader looks up by name. */
  private readonly folders = new Map<string, { entries: number; named: string[] }>();
  private ids: string[] | undefined;

  constructor(
    private readonly zip: ZipReader,
    private readonly digests: EntryDigests,
    private readonly archiveName: string,
  ) {
    this.owned = new Uint8Array(zip.index.count);
  }

  /** Hears a listed entry the zip holds at `position`, the first listing of it (the one its digest is). */
  readonly file = (entry: FileEntry, owner: FileOwner, position: number): void => {
    if (owner === null || String(Number(owner.revision)) !== owner.revision) return;
    const folder = folderOf(owner.prototype, owner.revision);
    if (folder === undefined || !entry.path.startsWith(folder) || entry.path.length === folder.length) return;
    this.owned[position] = 1;
    let held = this.folders.get(folder);
    if (held === undefined) this.folders.set(folder, (held = { entries: 0, named: [] }));
    held.entries += 1;
    const rest = entry.path.slice(folder.length);
    // Kept by a glance at its shape first: parsing every element's name would cost a second at start.
    if (
      NAMED.some(
        (k) => rest.startsWith(k.prefix) && slashes(rest) === k.slashes && parseRevisionEntry(rest)?.kind === k.kind,
      )
    )
      held.named.push(standalone(rest));
  };

  /** Hears a prototype's record. */
  readonly prototype = (id: string, record: PrototypeRecord): void => {
    this.ids = undefined;
    this.records.set(id, { revision: record.revision, complete: record.complete });
  };

  /** Prototype ids in archive order (numeric). */
  prototypeIds(): string[] {
    return (this.ids ??= [...this.records.keys()].sort(compareIds));
  }

  get(id: string): ViewedPrototype | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    const folder = folderOf(id, String(record.revision));
    const filed = folder === undefined ? undefined : this.folders.get(folder);
    return {
      id,
      ...record,
      entries: filed?.entries ?? 0,
      held: () => this.heldOf(id, record.revision, folder, filed?.named ?? []),
    };
  }

  private heldOf(id: string, revision: number, folder: string | undefined, named: readonly string[]): HeldPrototype {
    const { zip, digests } = this;
    const find = (rest: string) => {
      if (folder === undefined) return undefined;
      const hit = zip.index.lookup(folder + rest);
      return hit !== undefined && this.owned[hit.position] === 1 ? { path: folder + rest, ...hit } : undefined;
    };
    return {
      entries: {
        id,
        revision,
        // Only its pages' and discussions' names: the reader lists no other kind by name.
        async *names() {
          yield* named;
        },
        read: async (rest, maxBytes) => {
          const found = find(rest);
          if (found === undefined) return undefined;
          const recorded = digests.recorded(found.position);
          if (recorded.size > maxBytes) {
            throw new RabbitError(
              'ARCHIVE_CORRUPT',
              `${found.path} in ${this.archiveName} holds ${recorded.size} bytes, more than the ${maxBytes} read here`,
              { entry: found.path, data: { archive: zip.path } },
            );
          }
          return readVerified(
            zip.readEntry(found.path, maxBytes),
            recorded,
            `${found.path} in ${this.archiveName} does not match its manifest entry (size or sha256)`,
            { entry: found.path, data: { archive: zip.path } },
          );
        },
      },
      held: (rest) => Promise.resolve(find(rest)?.path),
      async head(rest, bytes) {
        const found = find(rest);
        return found === undefined ? undefined : firstBytes(await zip.openEntry(found.path), bytes);
      },
    };
  }
}

/**
 * The kinds the reader of a revision finds by their entries' names (ArchivedPrototypeReader: the
 * pages, when pages.json cannot be read, and the discussions), each with what its names start
 * with and how many folders deep they are, from the table of entries.
 */
const NAMED = (['page', 'discussion'] as const).map((kind) => ({
  kind,
  prefix: revisionEntryPrefix(kind),
  slashes: slashes(revisionEntryNameOf(kind, { page: '1', discussion: '1' })),
}));

function slashes(name: string): number {
  let count = 0;
  for (let at = name.indexOf('/'); at !== -1; at = name.indexOf('/', at + 1)) count += 1;
  return count;
}

/** A revision's folder; undefined for ids that make no safe name, which then hold nothing a reader may look up. */
function folderOf(prototype: string, revision: string): string | undefined {
  return isSafeSegment(prototype) && isSafeSegment(revision) ? revisionFolderOf(prototype, revision) : undefined;
}

/**
 * The first `bytes` of a stream, or undefined when it ends first or fails. A page rendering's size
 * is read from its first bytes, as the export reads it, not from the whole image checked against
 * the manifest: reading every rendering whole would cost the archive's size. Those bytes become two
 * numbers in the page and nothing else; the image itself is checked when the browser asks for it.
 */
async function firstBytes(stream: Readable, bytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let held = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      held += (chunk as Buffer).length;
      if (held >= bytes) return Buffer.concat(chunks).subarray(0, bytes);
    }
  } catch {
    return undefined;
  } finally {
    stream.destroy();
  }
  return undefined;
}
