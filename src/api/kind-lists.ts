import { CATEGORIES, KIND_NAMES, RESOURCE_KINDS, type Category, type Format, type KindName } from './resource-kinds.js';

/**
 * The lists of kinds readers use, taken from the table of resource kinds rather than kept beside
 * it: a row added to the table is in each of them (test/api/new-kind.test.ts adds one to a copy of
 * the table and follows it through).
 */

/** The lists that name a kind: a discussion is named by its prototype's list and by its page's. */
export function listsNaming(kind: KindName): KindName[] {
  return KIND_NAMES.filter((name) => RESOURCE_KINDS[name].member === kind);
}

/** A rendering of a page as `--formats` names it: every format but the JSON. */
export type RenderingFormat = Exclude<Format, 'json'>;

/** The renderings the table fetches, in its order. */
export const RENDERING_FORMATS: readonly RenderingFormat[] = [
  ...new Set(KIND_NAMES.flatMap((kind) => RESOURCE_KINDS[kind].format ?? [])),
];

/** What `--formats` takes: the JSON that is always fetched, then the renderings. */
export const FORMATS: readonly Format[] = ['json', ...RENDERING_FORMATS];

/**
 * Whether a kind is one a list of a prototype names: a page, a layer, an element, a discussion,
 * each with an id of its own. `ls` gives their categories a column each.
 */
export function isListedItem(kind: KindName): boolean {
  return listsNaming(kind).some((list) => RESOURCE_KINDS[list].scope === 'revision');
}

/** The categories of the listed items (`pages`, `layers`...), in `diff`'s order. */
export const ITEM_CATEGORIES: readonly Category[] = CATEGORIES.filter((category) =>
  KIND_NAMES.some((kind) => isListedItem(kind) && RESOURCE_KINDS[kind].category === category),
);
