import {
  categoryIdOf,
  parseSource,
  parseSourceBelowPrototype,
  prototypeSourceFolderOf,
  type ParsedPath,
} from '../api/entry-paths.js';
import { isSafeSegment } from '../api/reader-names.js';
import { API_PREFIX, CATEGORIES, RESOURCE_KINDS, type Category } from '../api/resource-kinds.js';

/** What kind of file a changed file of a prototype is, and how changes of each kind are counted. */

/**
 * What a changed file of a prototype is: one of its items, one of its lists (`pages.json`,
 * `pages/page1/elements.json`), its own metadata (`prototype`), or any other file it owns. Each
 * kind of the table says which (its `category`).
 */
export { CATEGORIES, type Category };

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

/**
 * What kind of file of prototype `id` a source is: an item, else a list or the metadata, else
 * other (named by its source, which an archive may hold anything in).
 */
export function fileOf(id: string, source: string): { category: Category; id: string } {
  const parsed = parseSource(source);
  if (parsed?.kind === 'prototype' && parsed.prototype === id) return named(parsed, 'prototype');
  // An archive may list a prototype under any id: one that makes no safe path owns no source.
  const prefix = isSafeSegment(id) ? prototypeSourceFolderOf(id) : undefined;
  if (prefix === undefined || !source.startsWith(prefix)) {
    return { category: 'other', id: source.startsWith(API_PREFIX) ? source.slice(API_PREFIX.length) : source };
  }
  const rest = source.slice(prefix.length);
  return parsed?.prototype === id ? named(parsed, rest) : { category: 'other', id: rest };
}

/** The prototype whose own metadata a source is: when it failed in B, the prototype is unreadable there, not removed. */
export function metadataOf(source: string): string | undefined {
  const parsed = parseSource(source);
  return parsed?.kind === 'prototype' ? parsed.prototype : undefined;
}

/** Which item an API path below `prototypes/{id}/` is, if it is one (not a list, not other). */
export function itemOf(rest: string): { category: Category; id: string } | undefined {
  const parsed = parseSourceBelowPrototype(rest);
  const item = parsed && named(parsed, rest);
  return item && item.category !== 'lists' && item.category !== 'other' ? item : undefined;
}

/** An item by the id its kind names it with; lists and other files by their path. */
function named(parsed: ParsedPath, rest: string): { category: Category; id: string } {
  return { category: RESOURCE_KINDS[parsed.kind].category, id: categoryIdOf(parsed) ?? rest };
}
