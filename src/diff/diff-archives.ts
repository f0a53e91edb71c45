import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { API_PREFIX } from '../archive/paths.js';
import { readArchiveManifest } from '../manifest/read-manifest.js';
import type { PrototypeRecord } from '../manifest/types.js';
import { compareIds } from '../core/ids.js';

export type Category = 'pages' | 'layers' | 'elements' | 'discussions' | 'renderings';
export const CATEGORIES: readonly Category[] = ['pages', 'layers', 'elements', 'discussions', 'renderings'];

export interface ItemChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

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

/** The source of a prototype's own metadata: when it failed in B, the prototype is unreadable there, not removed. */
const METADATA_SOURCE = new RegExp(`^${API_PREFIX.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}prototypes/(\\d+)\\.json$`);

/** A's side of one prototype, kept while B streams: its bodies wait in a spill file. */
interface Before extends DiffedPrototype {
  complete: boolean;
  fingerprint: string;
  spill: string;
}

/**
 * What changed from archive A to archive B, from their manifests alone: bodies are compared by
 * sha256 and matched by their API source, since archive paths carry the revision. Lists
 * (pages.json, elements.json...) and the prototype's own metadata are not items: what they name
 * shows up as added or removed items, and a new revision is reported as such.
 *
 * Both manifests stream, one prototype at a time: A's bodies by source go to a spill file per
 * prototype with a fingerprint kept in memory, and while B streams each of its prototypes is
 * compared by fingerprint, reading A's spill back only for a prototype that changed.
 */
export async function diffArchives(a: string, b: string): Promise<ArchiveDiff> {
  const spillDir = await mkdtemp(join(tmpdir(), 'rabbit-diff-'));
  try {
    const before = new Map<string, Before>();
    const headA = await readArchiveManifest(
      a,
      {
        async prototype(id, record) {
          const files = bySource(record);
          const spill = join(spillDir, `${before.size}.tsv`);
          await writeFile(spill, [...files].map((pair) => `${JSON.stringify(pair)}\n`).join(''));
          before.set(id, { ...summary(id, record), complete: record.complete, fingerprint: fingerprint(files), spill });
        },
      },
      { keepPrototypeFiles: true },
    );
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
    const headB = await readArchiveManifest(
      b,
      {
        async prototype(id, after) {
          seen.add(id);
          const was = before.get(id);
          if (was === undefined) return void diff.added.push(summary(id, after));
          const now = bySource(after);
          if (was.fingerprint === fingerprint(now) && was.revision === after.revision && was.name === after.name) {
            diff.unchanged++;
            return;
          }
          diff.changed.push(comparePrototype(id, was, await readSpill(was.spill), after, now));
        },
        error(error) {
          const id = METADATA_SOURCE.exec(error.source)?.[1];
          if (id !== undefined) failedMetadata.add(id);
        },
      },
      { keepPrototypeFiles: true },
    );
    diff.b.finishedAt = headB.finishedAt;
    for (const [id, was] of before) {
      if (!seen.has(id)) (failedMetadata.has(id) ? diff.unreadable : diff.removed).push({ id, name: was.name, revision: was.revision });
    }
    for (const list of [diff.added, diff.removed, diff.changed, diff.unreadable]) list.sort((x, y) => compareIds(x.id, y.id));
    return diff;
  } finally {
    await rm(spillDir, { recursive: true, force: true });
  }
}

function comparePrototype(id: string, before: Before, old: Map<string, string>, after: PrototypeRecord, now: Map<string, string>): PrototypeChange {
  const changes = Object.fromEntries(CATEGORIES.map((c): [Category, ItemChanges] => [c, { added: [], removed: [], changed: [] }])) as Record<Category, ItemChanges>;
  const prefix = `${API_PREFIX}prototypes/${id}/`;
  for (const source of new Set([...old.keys(), ...now.keys()])) {
    const item = itemOf(source.startsWith(prefix) ? source.slice(prefix.length) : '');
    if (!item) continue;
    const was = old.get(source);
    const is = now.get(source);
    const list = changes[item.category];
    if (!was) list.added.push(item.id);
    else if (!is) list.removed.push(item.id);
    else if (was !== is) list.changed.push(item.id);
  }
  for (const list of Object.values(changes)) for (const ids of [list.added, list.removed, list.changed]) ids.sort(compareIds);
  return {
    ...summary(id, after),
    fromRevision: before.revision,
    ...(before.name !== after.name ? { fromName: before.name } : {}),
    changes,
    incomplete: !before.complete || !after.complete,
  };
}

/** Which item an API path below `prototypes/{id}/` is, if it is one. */
export function itemOf(rest: string): { category: Category; id: string } | undefined {
  let match = /^pages\/([^/]+)\.json$/.exec(rest);
  if (match) return { category: 'pages', id: match[1] as string };
  match = /^pages\/([^/]+\.(?:html|png))$/.exec(rest);
  if (match) return { category: 'renderings', id: match[1] as string };
  match = /^layers\/([^/]+)\.json$/.exec(rest);
  if (match) return { category: 'layers', id: match[1] as string };
  match = /^(?:pages|layers)\/([^/]+)\/elements\/([^/]+)\.json$/.exec(rest);
  if (match) return { category: 'elements', id: `${match[1]}/${match[2]}` };
  match = /^discussions\/([^/]+)\.json$/.exec(rest);
  if (match) return { category: 'discussions', id: match[1] as string };
  return undefined;
}

/** sha256 by API source of the prototype's recorded revision; for a source listed twice, the last. */
function bySource(record: PrototypeRecord): Map<string, string> {
  const files = record.revisions[String(record.revision)]?.files ?? [];
  return new Map(files.map((file) => [file.source, file.sha256]));
}

/** Equal for equal source -> sha256 maps, whatever order the manifest listed them in. */
function fingerprint(files: Map<string, string>): string {
  const hash = createHash('sha256');
  for (const source of [...files.keys()].sort()) hash.update(`${source}\0${files.get(source) ?? ''}\n`);
  return hash.digest('hex');
}

async function readSpill(path: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (line === '') continue;
    const [source, sha256] = JSON.parse(line) as [string, string];
    files.set(source, sha256);
  }
  return files;
}

function summary(id: string, record: PrototypeRecord): DiffedPrototype {
  return { id, name: record.name, revision: record.revision };
}

