import { RabbitError } from '../core/errors.js';
import type { PathIds } from './entry-paths.js';
import { templatePieces } from './template-pieces.js';
import { API_PREFIX, PROTOTYPE_FOLDER, RESOURCE_KINDS, REVISION_FOLDER, type KindName } from './resource-kinds.js';

/**
 * Names for readers of an archive, built by the table of resource kinds as the export's are. The
 * export's builders (entry-paths.ts) refuse an id that is not of the service's shape; a reader
 * cannot: its ids come from an archive someone handed us, read leniently (archived-ids.ts), and it
 * must still look them up, show them and report them. So here an id is checked only for what makes
 * it safe inside a name or an API path: one plain segment, not `.` or `..`, without `/` or `\`,
 * without control characters, and without `?`, `#` or `%`, which a URL reads as more than a name.
 * An id that fails is refused (BAD_ID), never passed through, so no reader looks outside the entry
 * its kind names.
 */
const UNSAFE = /[/\\?#%\p{Cc}]/u;
/** No id the service gives comes near this; a longer one is no name a reader needs to build. */
const MAX_SEGMENT = 255;

/** Ids and revision as a reader has them: any text, checked for path safety alone. */
export type ReaderIds = PathIds & { revision?: number | string; key?: number | string };

export function isSafeSegment(text: string): boolean {
  return text.length > 0 && text.length <= MAX_SEGMENT && text !== '.' && text !== '..' && !UNSAFE.test(text);
}

function fillSafe(template: string, ids: ReaderIds): string {
  const pieces = templatePieces(template);
  let out = pieces[0] as string;
  for (let i = 1; i < pieces.length; i += 2) {
    const param = pieces[i] as keyof ReaderIds;
    const value = ids[param];
    const text = value === undefined ? '' : String(value);
    if (!isSafeSegment(text)) throw unsafeName(param, text);
    out += text + (pieces[i + 1] as string);
  }
  return out;
}

/** The archive folder of a prototype's revision, `prototypes/{id}/r{revision}/`. */
export function revisionFolderOf(prototype: string, revision: number | string): string {
  return fillSafe(REVISION_FOLDER, { prototype, revision });
}

/** Where the archive keeps one resource of `kind` below its revision's folder. */
export function revisionEntryNameOf(kind: KindName, ids: PathIds): string {
  return fillSafe(RESOURCE_KINDS[kind].entry, ids);
}

/** Where the archive keeps one resource of `kind`; a revision's kinds need the revision. */
export function entryNameOf(kind: KindName, ids: ReaderIds, revision?: number | string): string {
  const { scope, entry } = RESOURCE_KINDS[kind];
  if (scope === 'account') return fillSafe(entry, ids);
  return fillSafe(REVISION_FOLDER + entry, { ...ids, revision: revision ?? '' });
}

/** Where the service serves one resource of `kind`, with the query its kind carries. */
export function sourceNameOf(kind: KindName, ids: ReaderIds): string {
  const { api, query } = RESOURCE_KINDS[kind];
  if (api === null) throw new RabbitError('BAD_ID', `the service serves no ${kind} under a path of its own`);
  return `${API_PREFIX}${fillSafe(api, ids)}${query === undefined ? '' : `?${query}`}`;
}

/** The API folder every source of a prototype's own resources starts with, `/rabbit/api/prototypes/{id}/`. */
export function prototypeSourceFolderOf(prototype: string): string {
  return `${API_PREFIX}${fillSafe(PROTOTYPE_FOLDER, { prototype })}`;
}

/** What elements sit on: a page or a layer. */
export type ElementParent = 'page' | 'layer';

/** The lists of elements, each with the kind of what holds them: a page's, a layer's. */
const ELEMENT_LISTS = (Object.keys(RESOURCE_KINDS) as KindName[]).flatMap((kind) => {
  const { entry, parent, member } = RESOURCE_KINDS[kind];
  if (member === undefined || RESOURCE_KINDS[member].item !== 'element') return [];
  const folder = entry.slice(0, entry.lastIndexOf('/'));
  return [{ list: kind, element: member, parent: parent as ElementParent, folder }];
});

function elementList(parent: ElementParent): (typeof ELEMENT_LISTS)[number] {
  const found = ELEMENT_LISTS.find((list) => list.parent === parent);
  if (found === undefined) throw new RabbitError('BAD_ID', `no ${parent} holds elements`);
  return found;
}

/** The folder below the revision's that holds a page's or layer's elements (`pages/{id}`). */
export function elementFolderOf(parent: ElementParent, id: string): string {
  return fillSafe(elementList(parent).folder, { [parent]: id });
}

/** The entries below the revision's folder of the elements on a page or layer: their list's, each one's. */
export interface ElementEntries {
  list: string;
  element: (id: string) => string;
}

export function elementEntriesOf(parent: ElementParent, id: string): ElementEntries {
  const found = elementList(parent);
  const ids: PathIds = { [parent]: id };
  return {
    list: revisionEntryNameOf(found.list, ids),
    element: (element) => revisionEntryNameOf(found.element, { ...ids, element }),
  };
}

/** The entries of the elements in `folder`, as elementFolderOf names it; undefined for a folder of no elements. */
export function elementEntriesIn(folder: string): ElementEntries | undefined {
  const slash = folder.indexOf('/');
  const id = folder.slice(slash + 1);
  const found = ELEMENT_LISTS.find((list) => list.folder === `${folder.slice(0, slash + 1)}{${list.parent}}`);
  if (slash < 0 || found === undefined || !isSafeSegment(id)) return undefined;
  return elementEntriesOf(found.parent, id);
}

/**
 * The sources of the elements on a page or layer: their list's (where one is created), each
 * one's (read and updated), and each one's without its `.json`, the form the service's DELETE is
 * documented with.
 */
export function elementSourcesOf(
  prototype: string,
  parent: ElementParent,
  id: string,
): { list: string; element: (id: string) => string; bare: (id: string) => string } {
  const found = elementList(parent);
  const ids: ReaderIds = { prototype, [parent]: id };
  const element = (element: string) => sourceNameOf(found.element, { ...ids, element });
  return {
    list: sourceNameOf(found.list, ids),
    element,
    bare: (id) => element(id).replace(/\.json$/, ''),
  };
}

function unsafeName(param: string, text: string): RabbitError {
  return new RabbitError('BAD_ID', `${JSON.stringify(text)} is not a safe ${param} in a name`, { id: text });
}
