import { hash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { readArchiveManifest } from '../archive/open-archive.js';
import type { FileOwner } from '../manifest/manifest-stream.js';
import { GENERATED_SOURCE, type FileEntry, type PrototypeRecord } from '../manifest/types.js';
import { KeyedSpill } from '../storage/keyed-spill.js';
import { compareIds } from '../api/ids.js';
import { fnv1a } from '../zip/zip-index.js';
import {
  CATEGORIES,
  countsOf,
  fileOf,
  metadataOf,
  type Category,
  type ChangeCount,
  type ItemChanges,
} from './file-kinds.js';

export { CATEGORIES, fileOf, itemOf, type Category, type ChangeCount, type ItemChanges } from './file-kinds.js';

/** A prototype as a diff names it: id, name and revision, not its content (the viewer's PrototypeSummary is that). */
export interface DiffedPrototype {
  id: string;
  name: string | null;
  revision: number;
}

export interface PrototypeChange extends DiffedPrototype {
  /** Revision in A; `revision` is B's. */
  fromRevision: number;
  /** A's name when it changed. */
  fromName?: string | null;
  /** Items by category, each named by id (elements as `parent/element`, renderings as `page.html`). */
  changes: Record<Category, ItemChanges>;
  /** The same as counts, for the kinds that have any: a change always says what changed. */
  counts: Partial<Record<Category, ChangeCount>>;
  /** True when either archive did not get all of this prototype: a "removed" item may just be missing. */
  incomplete: boolean;
}

export interface ArchiveDiff {
  a: { archive: string; finishedAt: string };
  b: { archive: string; finishedAt: string };
  added: DiffedPrototype[];
  removed: DiffedPrototype[];
  changed: PrototypeChange[];
  /** In A, and absent from B only because B could not read it (its metadata failed). */
  unreadable: DiffedPrototype[];
  unchanged: number;
}

/** A's side of one prototype, kept while B streams: its bodies wait in A's spill. */
interface Before extends DiffedPrototype {
  complete: boolean;
  fingerprint: string;
}

/**
 * What changed from archive A to archive B, from their manifests alone: bodies are compared by
 * sha256 and matched by their API source, since archive paths carry the revision. Lists
 * (pages.json, elements.json...) and the prototype's own metadata are reported as files of their
 * own kind: a list or the metadata can change while every item it names stays the same.
 *
 * Both manifests stream and no entry is held: each side's (source, sha256) pairs go to a spill
 * file filed by prototype while a fingerprint of them is summed up, and when B's record of a
 * prototype closes it is compared with A's by fingerprint; only a prototype whose fingerprints
 * differ has its pairs read back from both spills and compared item by item (a bucket of sources
 * at a time for a big one, see compareItems).
 */
export async function diffArchives(a: string, b: string, options: DiffOptions = {}): Promise<ArchiveDiff> {
  const compareLines = options.compareLines ?? COMPARE_LINES;
  const spillDir = await mkdtemp(join(tmpdir(), 'rabbit-diff-'));
  const spills: KeyedSpill[] = [];
  try {
    const sideA = new Side((spills[0] = await KeyedSpill.create(join(spillDir, 'a'))));
    const sideB = new Side((spills[1] = await KeyedSpill.create(join(spillDir, 'b'))));
    const before = new Map<string, Before>();
    const headA = await readArchiveManifest(a, {
      file: sideA.file,
      prototype(id, record) {
        before.set(id, { ...summary(id, record), complete: record.complete, fingerprint: sideA.close(record) });
      },
    });
    const diff: ArchiveDiff = {
      a: { archive: basename(a), finishedAt: headA.finishedAt },
      b: { archive: basename(b), finishedAt: '' },
      added: [],
      removed: [],
      changed: [],
      unreadable: [],
      unchanged: 0,
    };
    const seen = new Set<string>();
    const failedMetadata = new Set<string>();
    const headB = await readArchiveManifest(b, {
      file: sideB.file,
      async prototype(id, after) {
        seen.add(id);
        const fingerprint = sideB.close(after);
        const was = before.get(id);
        if (was === undefined) return void diff.added.push(summary(id, after));
        const sameRecord = was.revision === after.revision && was.name === after.name;
        if (sameRecord && was.fingerprint === fingerprint) {
          diff.unchanged++;
          return;
        }
        // Fingerprints count a source listed twice twice; item by item says whether anything differs.
        const compared = await compareItems(id, [sideA, was.revision], [sideB, after.revision], {
          spillPath: join(spillDir, 'join'),
          compareLines,
        });
        if (sameRecord && compared.same) diff.unchanged++;
        else diff.changed.push(changeOf(id, was, after, compared.changes));
      },
      error(error) {
        const id = metadataOf(error.source);
        if (id !== undefined) failedMetadata.add(id);
      },
    });
    diff.b.finishedAt = headB.finishedAt;
    for (const [id, was] of before) {
      if (!seen.has(id))
        (failedMetadata.has(id) ? diff.unreadable : diff.removed).push({ id, name: was.name, revision: was.revision });
    }
    for (const list of [diff.added, diff.removed, diff.changed, diff.unreadable])
      list.sort((x, y) => compareIds(x.id, y.id));
    return diff;
  } finally {
    for (const spill of spills) await spill.close();
    await rm(spillDir, { recursive: true, force: true });
  }
}

/**
 * One archive's side: every prototype's (revision, source, sha256) listings filed in a spill by
 * prototype, and a fingerprint of the prototype streaming by per revision, since which revision
 * its record names is known only at its end.
 */
class Side {
  private sums = new Map<string, Fingerprint>();

  constructor(private readonly spill: KeyedSpill) {}

  readonly file = (entry: FileEntry, owner: FileOwner): void => {
    // Generated files (the offline views) are made from the bodies compared here, by this tool's
    // version, and all share one source: they tell nothing of the account and cannot be matched.
    if (owner === null || entry.source === GENERATED_SOURCE) return;
    this.spill.append(owner.prototype, JSON.stringify([owner.revision, entry.source, entry.sha256]));
    let sum = this.sums.get(owner.revision);
    if (sum === undefined) this.sums.set(owner.revision, (sum = new Fingerprint()));
    sum.add(entry.source, entry.sha256);
  };

  /** The fingerprint of the recorded revision of the prototype whose record just closed. */
  close(record: PrototypeRecord): string {
    const sum = this.sums.get(String(record.revision)) ?? new Fingerprint();
    this.sums = new Map();
    return sum.digest();
  }

  /** How many listings of the prototype were filed, every revision's. */
  count(id: string): number {
    return this.spill.count(id);
  }

  /** (source, sha256) of one revision of a prototype, in the order listed, streamed from disk. */
  async *files(id: string, revision: number): AsyncGenerator<[string, string]> {
    const wanted = String(revision);
    for await (const line of this.spill.eachLine(id)) {
      const [listedUnder, source, sha256] = JSON.parse(line) as [string, string, string];
      if (listedUnder === wanted) yield [source, sha256];
    }
  }
}

/** Listings compared in memory at once, per side: past this a prototype's are split by source first. */
const COMPARE_LINES = 20_000;

export interface DiffOptions {
  /** Listings of one prototype compared in memory at once (COMPARE_LINES); a test sets it low to split small ones. */
  compareLines?: number;
}

/**
 * A prototype's items compared, A's revision with B's: a map from source to sha256 per side, for
 * a source listed twice the last. A prototype of more listings than COMPARE_LINES is split into
 * buckets by a hash of the source, both sides alike, through a spill file, and compared a bucket
 * at a time: memory follows the bucket, not the prototype.
 */
async function compareItems(
  id: string,
  [sideA, revisionA]: [Side, number],
  [sideB, revisionB]: [Side, number],
  { spillPath, compareLines }: { spillPath: string; compareLines: number },
): Promise<{ same: boolean; changes: Record<Category, ItemChanges> }> {
  const changes = Object.fromEntries(
    CATEGORIES.map((c): [Category, ItemChanges] => [c, { added: [], removed: [], changed: [] }]),
  ) as Record<Category, ItemChanges>;
  let same = true;
  const compare = (old: Map<string, string>, now: Map<string, string>): void => {
    same &&= sameFiles(old, now);
    visitChanges(id, old, now, changes);
  };
  const toMap = async (listings: AsyncIterable<[string, string]>): Promise<Map<string, string>> => {
    const map = new Map<string, string>();
    for await (const [source, sha256] of listings) map.set(source, sha256);
    return map;
  };
  const buckets = Math.ceil(Math.max(sideA.count(id), sideB.count(id)) / compareLines);
  if (buckets <= 1) {
    compare(await toMap(sideA.files(id, revisionA)), await toMap(sideB.files(id, revisionB)));
  } else {
    const spill = await KeyedSpill.create(spillPath);
    try {
      for await (const [source, sha256] of sideA.files(id, revisionA))
        spill.append(`a${fnv1a(source) % buckets}`, JSON.stringify([source, sha256]));
      for await (const [source, sha256] of sideB.files(id, revisionB))
        spill.append(`b${fnv1a(source) % buckets}`, JSON.stringify([source, sha256]));
      const parsed = async function* (key: string): AsyncGenerator<[string, string]> {
        for await (const line of spill.eachLine(key)) yield JSON.parse(line) as [string, string];
      };
      for (let bucket = 0; bucket < buckets; bucket++)
        compare(await toMap(parsed(`a${bucket}`)), await toMap(parsed(`b${bucket}`)));
    } finally {
      await spill.close();
      await rm(spillPath, { force: true });
    }
  }
  for (const list of Object.values(changes))
    for (const ids of [list.added, list.removed, list.changed]) ids.sort(compareIds);
  return { same, changes };
}

/**
 * The same for the same (source, sha256) listings in any order: a sum, lane by lane, of each
 * listing's own sha256. Equal maps from source to sha256 give equal fingerprints unless a source
 * is listed twice, which the item by item comparison then settles.
 */
class Fingerprint {
  private readonly lanes = new Uint32Array(8);

  add(source: string, sha256: string): void {
    const digest = hash('sha256', `${source}\0${sha256}`, 'buffer');
    for (let i = 0; i < 8; i++) this.lanes[i] = ((this.lanes[i] as number) + digest.readUInt32LE(i * 4)) >>> 0;
  }

  digest(): string {
    return Buffer.from(this.lanes.buffer).toString('hex');
  }
}

function sameFiles(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [source, sha256] of a) if (b.get(source) !== sha256) return false;
  return true;
}

/** Adds to `changes` the items whose sha256 differs between the two maps of the same sources. */
function visitChanges(
  id: string,
  old: Map<string, string>,
  now: Map<string, string>,
  changes: Record<Category, ItemChanges>,
): void {
  const visit = (source: string, was: string | undefined, is: string | undefined): void => {
    if (was === is) return;
    const item = fileOf(id, source);
    const list = changes[item.category];
    if (!was) list.added.push(item.id);
    else if (!is) list.removed.push(item.id);
    else list.changed.push(item.id);
  };
  // Each source once: A's, then those only B has (no list of both, at tens of thousands a prototype).
  for (const [source, was] of old) visit(source, was, now.get(source));
  for (const [source, is] of now) if (!old.has(source)) visit(source, undefined, is);
}

function changeOf(
  id: string,
  before: Before,
  after: PrototypeRecord,
  changes: Record<Category, ItemChanges>,
): PrototypeChange {
  return {
    ...summary(id, after),
    fromRevision: before.revision,
    ...(before.name !== after.name ? { fromName: before.name } : {}),
    changes,
    counts: countsOf(changes),
    incomplete: !before.complete || !after.complete,
  };
}

function summary(id: string, record: PrototypeRecord): DiffedPrototype {
  return { id, name: record.name, revision: record.revision };
}
