import { RabbitError, isRabbitError } from '../core/errors.js';
import { readIdList } from '../api/parse.js';
import { elementEntriesOf, revisionEntryNameOf } from '../api/entry-paths.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';
import { noSuchPrototype } from '../api/held-prototypes.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { openArchive } from '../archive/open-archive.js';
import { checkElementBody } from './element-shape.js';
import type { ElementState, ParentKind } from './plan.js';
import { jsonText } from '../api/json-body.js';

/**
 * The pages and layers of the archived prototype with their elements, every id and attribute
 * checked before the restore may put it in a URL or a request body. What fails a check is
 * reported and left out, never sent.
 */
export interface ParentRef {
  kind: ParentKind;
  id: string;
}

export interface ArchivedParent extends ParentRef {
  elements: ElementState[];
  /** Ids the archive lists whose bodies could not be used: kept as they are live. */
  unusable: string[];
}

export interface Skip {
  parent?: string;
  element?: string;
  reason: string;
}

export interface Selection {
  pages?: readonly string[];
  layers?: readonly string[];
}

/** The archived list of a prototype's pages, of its layers. */
const LISTS = { page: 'page-list', layer: 'layer-list' } as const;

export const READ_CAPS = { list: 32 * 1024 * 1024, element: 1024 * 1024 } as const;

/**
 * Opens the archive and reads the selected parents of one prototype's recorded revision: USAGE
 * when the archive holds no such prototype, ARCHIVE_CORRUPT when it lists nothing for its revision.
 * Only that prototype's entries are filed from the manifest as it streams by.
 */
export async function readArchivedPrototype(
  path: string,
  prototypeId: string,
  selection: Selection,
): Promise<{ parents: ArchivedParent[]; skipped: Skip[]; revision: number }> {
  const archive = await openArchive(path);
  try {
    const catalog = await archive.catalog({ accept: (_entry, owner) => owner.prototype === prototypeId });
    try {
      const prototype = catalog.prototype(prototypeId);
      // Restore takes one prototype and needs it named: the next step cannot be "without --prototype".
      if (prototype === undefined)
        throw noSuchPrototype([prototypeId], catalog.prototypeIds(), {
          name: archive.name,
          archive: path,
          required: true,
        });
      if (!prototype.hasRevision) {
        throw new RabbitError(
          'ARCHIVE_CORRUPT',
          `${archive.name} lists no files for revision ${prototype.revision} of prototype ${prototypeId}`,
        );
      }
      return { ...(await readArchivedParents(prototype, selection)), revision: prototype.revision };
    } finally {
      await catalog.close();
    }
  } finally {
    archive.close();
  }
}

export async function readArchivedParents(
  source: ArchivedPrototype,
  selection: Selection,
): Promise<{ parents: ArchivedParent[]; skipped: Skip[] }> {
  const skipped: Skip[] = [];
  const selecting = selection.pages !== undefined || selection.layers !== undefined;
  const refs: ParentRef[] = [];
  for (const kind of ['page', 'layer'] as const) {
    const archived = await archivedIds(source, revisionEntryNameOf(LISTS[kind], {}), kind, skipped);
    const wanted = selecting ? ((kind === 'page' ? selection.pages : selection.layers) ?? []) : archived;
    for (const id of wanted) {
      if (!archived.includes(id)) {
        throw new RabbitError(
          'USAGE',
          `the archive has no ${kind} ${id} in prototype ${source.id} (revision ${source.revision})`,
        );
      }
      if (!refs.some((ref) => ref.id === id)) refs.push({ kind, id });
    }
  }
  const parents: ArchivedParent[] = [];
  for (const ref of refs) {
    const names = elementEntriesOf(ref.kind, ref.id);
    const ids = await archivedIds(source, names.list, 'element', skipped, ref.id);
    if (ids === undefined) continue;
    const elements: ElementState[] = [];
    const unusable: string[] = [];
    for (const id of ids) {
      const element = await archivedElement(source, names.element(id), id);
      if ('reason' in element) {
        skipped.push({ parent: ref.id, element: id, reason: element.reason });
        unusable.push(id);
      } else {
        elements.push(element);
      }
    }
    parents.push({ ...ref, elements, unusable });
  }
  return { parents, skipped };
}

/** An archived id list; for an element list, undefined (and a skip) when the archive lacks it. */
async function archivedIds(
  source: ArchivedPrototype,
  name: string,
  kind: 'page' | 'layer',
  skipped: Skip[],
): Promise<string[]>;
async function archivedIds(
  source: ArchivedPrototype,
  name: string,
  kind: 'element',
  skipped: Skip[],
  parent: string,
): Promise<string[] | undefined>;
async function archivedIds(
  source: ArchivedPrototype,
  name: string,
  kind: 'page' | 'layer' | 'element',
  skipped: Skip[],
  parent?: string,
): Promise<string[] | undefined> {
  const data = await readChecked(source, name, READ_CAPS.list);
  if (typeof data === 'string') {
    skipped.push({ ...(parent ? { parent } : {}), reason: data });
    return kind === 'element' ? undefined : [];
  }
  if (data === undefined) {
    skipped.push({ ...(parent ? { parent } : {}), reason: `the archive does not hold ${name}` });
    return kind === 'element' ? undefined : [];
  }
  try {
    const list = readIdList(data, kind, name, kind !== 'element' && RESOURCE_KINDS[LISTS[kind]].objectForm === true);
    for (const raw of list.rejected) {
      skipped.push({ ...(parent ? { parent } : {}), reason: `${name} lists ${raw}, which is not a ${kind} id` });
    }
    return list.ids;
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    skipped.push({ ...(parent ? { parent } : {}), reason: `${name} in the archive is not an id list` });
    return kind === 'element' ? undefined : [];
  }
}

async function archivedElement(
  source: ArchivedPrototype,
  name: string,
  id: string,
): Promise<ElementState | { reason: string }> {
  const data = await readChecked(source, name, READ_CAPS.element);
  if (typeof data === 'string') return { reason: data };
  if (data === undefined) return { reason: `the archive does not hold ${name}` };
  let body: unknown;
  try {
    body = JSON.parse(jsonText(data));
  } catch {
    return { reason: `${name} in the archive is not JSON` };
  }
  const checked = checkElementBody(body, id);
  return 'problem' in checked ? { reason: checked.problem } : { id, attributes: checked.attributes };
}

/** A damaged or oversized entry costs the restore that entry, not the run: its message instead. */
async function readChecked(
  source: ArchivedPrototype,
  name: string,
  maxBytes: number,
): Promise<Buffer | undefined | string> {
  try {
    return await source.read(name, maxBytes);
  } catch (error) {
    if (isRabbitError(error, 'ARCHIVE_CORRUPT')) return error.message;
    throw error;
  }
}
