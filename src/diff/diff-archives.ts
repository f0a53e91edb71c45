import { basename } from 'node:path';
import { API_PREFIX } from '../archive/paths.js';
import { readArchiveManifest } from '../manifest/read-manifest.js';
import type { FileEntry, Manifest, PrototypeRecord } from '../manifest/types.js';

export type Category = 'pages' | 'layers' | 'elements' | 'discussions' | 'renderings';
export const CATEGORIES: readonly Category[] = ['pages', 'layers', 'elements', 'discussions', 'renderings'];

export interface ItemChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface PrototypeSummary {
  id: string;
  name: string | null;
  revision: number;
}

export interface PrototypeChange extends PrototypeSummary {
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
  added: PrototypeSummary[];
  removed: PrototypeSummary[];
  changed: PrototypeChange[];
  /** In A, and absent from B only because B could not read it (its metadata failed). */
  unreadable: PrototypeSummary[];
  unchanged: number;
}

/**
 * What changed from archive A to archive B, from their manifests alone (a few kilobytes of each):
 * bodies are compared by sha256 and matched by their API source, since archive paths carry the
 * revision. Lists (pages.json, elements.json...) and the prototype's own metadata are not items:
 * what they name shows up as added or removed items, and a new revision is reported as such.
 */
export async function diffArchives(a: string, b: string): Promise<ArchiveDiff> {
  const [left, right] = await Promise.all([readArchiveManifest(a), readArchiveManifest(b)]);
  return diffManifests(left, right, basename(a), basename(b));
}

export function diffManifests(a: Manifest, b: Manifest, nameA: string, nameB: string): ArchiveDiff {
  const diff: ArchiveDiff = {
    a: { archive: nameA, finishedAt: a.finishedAt },
    b: { archive: nameB, finishedAt: b.finishedAt },
    added: [],
    removed: [],
    changed: [],
    unreadable: [],
    unchanged: 0,
  };
  for (const [id, record] of sorted(b.prototypes)) {
    if (!Object.hasOwn(a.prototypes, id)) diff.added.push(summary(id, record));
  }
  for (const [id, before] of sorted(a.prototypes)) {
    const after = Object.hasOwn(b.prototypes, id) ? b.prototypes[id] : undefined;
    if (after === undefined) {
      (metadataFailed(b, id) ? diff.unreadable : diff.removed).push(summary(id, before));
      continue;
    }
    const change = comparePrototype(id, before, after);
    if (change) diff.changed.push(change);
    else diff.unchanged++;
  }
  return diff;
}

function comparePrototype(id: string, before: PrototypeRecord, after: PrototypeRecord): PrototypeChange | undefined {
  const old = bySource(before);
  const now = bySource(after);
  const sameBodies = old.size === now.size && [...old].every(([source, entry]) => now.get(source)?.sha256 === entry.sha256);
  if (sameBodies && before.revision === after.revision && before.name === after.name) return undefined;
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
    else if (was.sha256 !== is.sha256) list.changed.push(item.id);
  }
  for (const list of Object.values(changes)) for (const ids of [list.added, list.removed, list.changed]) ids.sort(byId);
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

function bySource(record: PrototypeRecord): Map<string, FileEntry> {
  const files = record.revisions[String(record.revision)]?.files ?? [];
  return new Map(files.map((file) => [file.source, file]));
}

function metadataFailed(manifest: Manifest, id: string): boolean {
  const source = `${API_PREFIX}prototypes/${id}.json`;
  return manifest.errors.some((error) => error.source === source);
}

function summary(id: string, record: PrototypeRecord): PrototypeSummary {
  return { id, name: record.name, revision: record.revision };
}

const byId = new Intl.Collator('en', { numeric: true }).compare;

function sorted<T>(record: Record<string, T>): Array<[string, T]> {
  return Object.entries(record).sort(([x], [y]) => byId(x, y));
}
