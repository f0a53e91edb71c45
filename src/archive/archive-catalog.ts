import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standalone } from '../core/standalone-string.js';
import { compareIds } from '../api/ids.js';
import { isSafeSegment, revisionFolderOf } from '../api/reader-names.js';
import type { FileOwner, ManifestHead, ManifestVisitor } from '../manifest/manifest-stream.js';
import type { FileEntry, Milestone, PrototypeOrigin } from '../manifest/types.js';
import { KeyedSpill } from '../storage/keyed-spill.js';
import { ListedEntries } from './listed-entries.js';
import type { Archive } from './open-archive.js';

/** What the manifest records of a prototype, its entries aside. */
export interface PrototypeInfo {
  id: string;
  name: string | null;
  revision: number;
  lastModification: number | null;
  lastUser: string | null;
  /** What the manifest says: false when the export could not fetch all of it. */
  complete: boolean;
  origin?: PrototypeOrigin;
  /** The milestone of the recorded revision, or null. */
  milestone: Milestone | null;
  /** False when the record lists nothing under its own revision (no `revisions[revision]`). */
  hasRevision: boolean;
}

/**
 * One archived prototype as convert and restore read it: its recorded revision's entries, each by
 * its name below `prototypes/{id}/r{revision}/` (`pages.json`, `pages/page1/elements.json`).
 * Nothing per entry is in memory: entries are found through the zip's index and the catalog's
 * file on disk, and their names stream from disk.
 */
export interface ArchivedPrototype extends PrototypeInfo {
  /** How many entries of the revision the catalog holds. */
  readonly entries: number;
  /** Whether the manifest lists the entry under this revision (present in the zip or not). */
  has(rest: string): boolean;
  /** The manifest entry; undefined when it lists none, or the zip does not hold it. */
  entry(rest: string): Promise<FileEntry | undefined>;
  /** The names of every listed entry the zip holds, in manifest order, read from disk as they are asked for. */
  names(): AsyncIterable<string>;
  /**
   * The entry's bytes checked against the manifest (see Archive.body); undefined when the manifest
   * lists none or the zip does not hold it, ARCHIVE_CORRUPT when they are damaged or too large.
   */
  read(rest: string, maxBytes: number): Promise<Buffer | undefined>;
}

export interface ArchiveCatalog {
  readonly head: ManifestHead;
  /** Prototype ids in archive order (numeric). */
  prototypeIds(): string[];
  prototype(id: string): ArchivedPrototype | undefined;
  /** A filed entry by its path in the zip. */
  entry(path: string): Promise<FileEntry | undefined>;
  /** Lets go of the files on disk and what memory holds per entry (four bytes); again is harmless. */
  close(): Promise<void>;
}

export interface CatalogOptions {
  /** Hears the manifest as it streams by (so a reader that needs more of it need not read it twice). */
  visitor?: ManifestVisitor;
  /**
   * Which listed entries to file, beyond being in their prototype's own revision folder and held
   * by the zip (`zipSize` is the size the zip records for it).
   */
  accept?(entry: FileEntry, owner: { prototype: string; revision: string }, zipSize: number): boolean;
  /** Where the catalog's files go; a temp folder by default. */
  spillDir?: string;
}

/**
 * Streams the archive's manifest once and files every entry listed under a prototype's revision
 * (at that revision's own folder, under a plain revision number) by its zip position, and its name
 * under the prototype: memory keeps four bytes per zip entry and a small record per prototype,
 * whatever the size of one prototype or of the account. Entries listed twice keep the first.
 */
export async function openCatalog(archive: Archive, options: CatalogOptions = {}): Promise<ArchiveCatalog> {
  const { zip } = archive;
  const dir = await mkdtemp(join(options.spillDir ?? tmpdir(), '.rabbit-catalog-'));
  let listed: ListedEntries | undefined;
  let names: KeyedSpill | undefined;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    // Gone from the folder at once (a caller may look right after a synchronous close); the open files are closed after.
    rmSync(dir, { recursive: true, force: true });
    await listed?.close();
    await names?.close();
  };
  try {
    const filed: Filed = {
      zip,
      entries: (listed = await ListedEntries.create(join(dir, 'entries'), zip.index.count)),
      spill: (names = await KeyedSpill.create(join(dir, 'names'))),
      absent: new Set<string>(),
      prototypes: new Map<string, PrototypeInfo>(),
    };
    const head = await archive.manifest(filingVisitor(filed, options));
    await filed.entries.flush();
    const ids = [...filed.prototypes.keys()].sort(compareIds);
    const entry = async (path: string): Promise<FileEntry | undefined> => {
      if (closed) throw new Error(`internal: the catalog of ${archive.name} was read after it was closed`);
      const hit = zip.index.lookup(path);
      return hit !== undefined && filed.entries.has(hit.position) ? filed.entries.get(hit.position, path) : undefined;
    };
    const prototype = (id: string): ArchivedPrototype | undefined => {
      const info = filed.prototypes.get(id);
      return info === undefined ? undefined : archivedPrototype(archive, filed, info, entry);
    };
    return { head, prototypeIds: () => ids, prototype, entry, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** What the catalog files as the manifest streams by, and where. */
interface Filed {
  zip: Archive['zip'];
  /** Each filed entry by its zip position, on disk. */
  entries: ListedEntries;
  /** The names of each prototype revision's entries, on disk. */
  spill: KeyedSpill;
  /** Listed paths the zip does not hold: an anomaly, so few. */
  absent: Set<string>;
  prototypes: Map<string, PrototypeInfo>;
}

/** The caller's visitor, with each listed entry and prototype record filed after it has heard them. */
function filingVisitor(filed: Filed, options: CatalogOptions): ManifestVisitor {
  const { zip, entries, spill, absent, prototypes } = filed;
  const visitor = options.visitor ?? {};
  return {
    ...visitor,
    async file(entry: FileEntry, owner: FileOwner) {
      await visitor.file?.(entry, owner);
      if (owner === null || String(Number(owner.revision)) !== owner.revision) return;
      const prefix = folderOf(owner.prototype, owner.revision);
      if (prefix === undefined || !entry.path.startsWith(prefix) || entry.path.length === prefix.length) return;
      const hit = zip.index.lookup(entry.path);
      if (hit === undefined) {
        absent.add(entry.path);
        return;
      }
      if (options.accept && !options.accept(entry, owner, hit.record.uncompressedSize)) return;
      if (entries.has(hit.position)) return;
      await entries.add(hit.position, entry);
      // A batch of names waiting to be written would keep every chunk they were parsed from alive.
      spill.append(keyOf(owner.prototype, owner.revision), standalone(entry.path.slice(prefix.length)));
    },
    async prototype(id, record) {
      await visitor.prototype?.(id, record);
      const revision = record.revisions[String(record.revision)];
      prototypes.set(id, {
        id,
        name: record.name,
        revision: record.revision,
        lastModification: record.lastModification,
        lastUser: record.lastUser ?? null,
        complete: record.complete,
        ...(record.origin ? { origin: record.origin } : {}),
        milestone: revision?.milestone ?? null,
        hasRevision: revision !== undefined,
      });
    },
  };
}

/** One prototype's recorded revision, its entries found through the zip's index and the catalog's files. */
function archivedPrototype(
  archive: Archive,
  filed: Filed,
  info: PrototypeInfo,
  entry: (path: string) => Promise<FileEntry | undefined>,
): ArchivedPrototype {
  const { zip, entries, spill, absent } = filed;
  const prefix = folderOf(info.id, String(info.revision));
  const find = async (rest: string) => (prefix === undefined ? undefined : entry(prefix + rest));
  return {
    ...info,
    entries: spill.count(keyOf(info.id, String(info.revision))),
    has(rest) {
      if (prefix === undefined) return false;
      const hit = zip.index.lookup(prefix + rest);
      return (hit !== undefined && entries.has(hit.position)) || absent.has(prefix + rest);
    },
    entry: find,
    names: () => spill.eachLine(keyOf(info.id, String(info.revision))),
    async read(rest, maxBytes) {
      const found = await find(rest);
      return found === undefined ? undefined : archive.body(found, maxBytes);
    },
  };
}

/**
 * A revision's folder in the archive, where the exporter puts every resource of that revision;
 * undefined for a prototype the manifest names by an id that makes no safe name, which then holds
 * nothing a reader may look up.
 */
function folderOf(prototype: string, revision: string): string | undefined {
  return isSafeSegment(prototype) && isSafeSegment(revision) ? revisionFolderOf(prototype, revision) : undefined;
}

function keyOf(prototype: string, revision: string): string {
  return `${prototype}/${revision}`;
}
