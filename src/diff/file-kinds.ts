import { API_PREFIX } from '../api/paths.js';

/** What kind of file a changed file of a prototype is, and how changes of each kind are counted. */

/**
 * What a changed file of a prototype is: one of its items, one of its lists (`pages.json`,
 * `pages/page1/elements.json`), its own metadata (`prototype`), or any other file it owns.
 */
export type Category = 'pages' | 'layers' | 'elements' | 'discussions' | 'renderings' | 'lists' | 'metadata' | 'other';
export const CATEGORIES: readonly Category[] = [
  'pages',
  'layers',
  'elements',
  'discussions',
  'renderings',
  'lists',
  'metadata',
  'other',
];

export interface ItemChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** How many files of one kind were added, removed and changed. */
export interface ChangeCount {
  added: number;
  removed: number;
  changed: number;
}

export function countsOf(changes: Record<Category, ItemChanges>): Partial<Record<Category, ChangeCount>> {
  const counts: Partial<Record<Category, ChangeCount>> = {};
  for (const category of CATEGORIES) {
    const { added, removed, changed } = changes[category];
    if (added.length + removed.length + changed.length > 0)
      counts[category] = { added: added.length, removed: removed.length, changed: changed.length };
  }
  return counts;
}

const LIST = /^(?:(?:pages|layers)\/[^/]+\/)?(?:pages|layers|elements|discussions)\.json$/;

/**
 * What kind of file of prototype `id` a source is: an item, else a list or the metadata, else
 * other (named by its source, which an archive may hold anything in).
 */
export function fileOf(id: string, source: string): { category: Category; id: string } {
  const prefix = `${API_PREFIX}prototypes/${id}/`;
  if (source === `${API_PREFIX}prototypes/${id}.json`) return { category: 'metadata', id: 'prototype' };
  if (!source.startsWith(prefix)) {
    return { category: 'other', id: source.startsWith(API_PREFIX) ? source.slice(API_PREFIX.length) : source };
  }
  const rest = source.slice(prefix.length);
  return itemOf(rest) ?? { category: LIST.test(rest) ? 'lists' : 'other', id: rest };
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
