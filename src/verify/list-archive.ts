import { parseRevisionEntry, prototypeOf, revisionFolderOf } from '../api/entry-paths.js';
import { isSafeSegment } from '../api/reader-names.js';
import { ITEM_CATEGORIES } from '../api/kind-lists.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';
import { openArchive } from '../archive/open-archive.js';
import type { ZipIndex } from '../zip/zip-index.js';
import { compareIds } from '../api/ids.js';

export interface ListRow {
  id: string;
  /** Null when the service sent no name, or the prototype is known only from its errors. */
  name: string | null;
  /** The archived revision; null when nothing of the prototype was archived. */
  revision: number | null;
  pages: number;
  layers: number;
  elements: number;
  discussions: number;
  /** Entries of the archived revision (every resource and generated file) and their bytes. */
  resources: number;
  bytes: number;
  /** Manifest errors recorded against this prototype. */
  errors: number;
  complete: boolean;
}

/**
 * The kinds of a prototype's files that have a column of their own, by their category: what its
 * lists name (the table of kinds says which those are).
 */
type Column = 'pages' | 'layers' | 'elements' | 'discussions';
type Counts = Record<Column, number> & { resources: number; bytes: number };
const COLUMNS: ReadonlySet<string> = new Set(ITEM_CATEGORIES);

/** Nothing counted yet: a zero for each column, and for a kind of item the table gains too (`--json` shows it). */
function noCounts(): Counts {
  return {
    ...(Object.fromEntries(ITEM_CATEGORIES.map((column) => [column, 0])) as Record<Column, number>),
    resources: 0,
    bytes: 0,
  };
}

/**
 * One row per prototype, from manifest.json, streamed: nothing per entry is kept but four bytes by
 * zip position (which prototype counted it), whatever the size of the archive or of one prototype.
 * Prototypes that only appear in errors (their metadata
 * never arrived) are listed too, so `ls` never hides a prototype the export knew about.
 */
export async function listArchive(path: string): Promise<ListRow[]> {
  const rows: ListRow[] = [];
  const errorsById = new Map<string, number>();
  // The current prototype's counts per revision, taken as its entries stream by: the recorded
  // revision is only known once the record closes, and entries kept until then would pile up.
  let counting = new Map<string, Counter>();
  const archive = await openArchive(path);
  const seen = new Seen(archive.zip.index);
  try {
    await archive.manifest({
      file(entry, owner) {
        if (owner === null) return;
        let counter = counting.get(owner.revision);
        if (counter === undefined) counting.set(owner.revision, (counter = new Counter(folderOf(owner), seen)));
        counter.add(entry.path, entry.size);
      },
      prototype(id, record) {
        const counter = counting.get(String(record.revision));
        counting = new Map();
        seen.next();
        rows.push({
          id,
          name: record.name,
          revision: record.revision,
          ...(counter?.counts ?? noCounts()),
          errors: 0,
          complete: record.complete,
        });
      },
      error(error) {
        // By its API source or, for a local failure, its entry name.
        const id = prototypeOf(error.source);
        if (id !== undefined) errorsById.set(id, (errorsById.get(id) ?? 0) + 1);
      },
    });
  } finally {
    archive.close();
  }
  const listed = new Set<string>();
  for (const row of rows) {
    row.errors = errorsById.get(row.id) ?? 0;
    listed.add(row.id);
  }
  for (const [id, errors] of errorsById) {
    if (listed.has(id)) continue;
    rows.push({
      id,
      name: null,
      revision: null,
      ...noCounts(),
      errors,
      complete: false,
    });
  }
  return rows.sort((a, b) => compareIds(a.id, b.id));
}

/** A revision's folder; one whose ids make no safe name has no files of its own to count. */
function folderOf(owner: { prototype: string; revision: string }): string | undefined {
  const { prototype, revision } = owner;
  return isSafeSegment(prototype) && isSafeSegment(revision) ? revisionFolderOf(prototype, revision) : undefined;
}

/** Counts a revision's own files by kind, each path once. */
class Counter {
  readonly counts = noCounts();
  constructor(
    private readonly prefix: string | undefined,
    private readonly seen: Seen,
  ) {}
  add(path: string, size: number): void {
    if (this.prefix === undefined || !path.startsWith(this.prefix) || !this.seen.first(path)) return;
    const rest = path.slice(this.prefix.length);
    this.counts.resources += 1;
    this.counts.bytes += size;
    const kind = parseRevisionEntry(rest)?.kind;
    const column = kind === undefined ? undefined : RESOURCE_KINDS[kind].category;
    if (column !== undefined && COLUMNS.has(column)) this.counts[column as Column] += 1;
  }
}

/**
 * Which paths the prototype streaming by has listed already. A path the zip holds is marked by
 * its zip position with the prototype's turn (four bytes an entry, never cleared: the next
 * prototype has a turn of its own); one it lacks, an anomaly, goes to a set of its own.
 */
class Seen {
  private readonly turns: Uint32Array;
  private turn = 1;
  private absent = new Set<string>();
  constructor(private readonly index: ZipIndex) {
    this.turns = new Uint32Array(index.count);
  }
  /** True the first time the current prototype lists `path`. */
  first(path: string): boolean {
    const hit = this.index.lookup(path);
    if (hit === undefined) {
      if (this.absent.has(path)) return false;
      this.absent.add(path);
      return true;
    }
    if (this.turns[hit.position] === this.turn) return false;
    this.turns[hit.position] = this.turn;
    return true;
  }
  next(): void {
    this.turn++;
    this.absent = new Set();
  }
}
