import { RabbitError } from '../core/errors.js';
import { noSuchPrototype } from '../api/held-prototypes.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { ArchivedPrototypeReader, READ_LIMITS, type EntryProblem } from '../archive/archived-prototype-reader.js';
import { openArchive } from '../archive/open-archive.js';
import { checkElementBody } from './element-shape.js';
import type { ElementState, ParentKind } from './plan.js';

/**
 * The pages and layers of the archived prototype with their elements, read by the archive's reader
 * of a prototype (archive/archived-prototype-reader.ts) taking only ids of the service's shapes,
 * and every attribute checked before the restore may put it in a URL or a request body. What fails
 * a check is reported and left out, never sent.
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

/**
 * What restore reads of the live service: an element body is held to what the archive's reader
 * takes of an archived one, a list of ids to less than any JSON entry.
 */
export const READ_CAPS = { list: 32 * 1024 * 1024, element: READ_LIMITS.elementBytes } as const;

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
          { data: { archive: path } },
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
  const reader = new ArchivedPrototypeReader(source, {
    ids: 'service',
    // An id listed twice is restored once: nothing is lost, so nothing is skipped.
    onProblem: (problem) => problem.error.code !== 'DUPLICATE_ENTRY' && skipped.push(skipOf(problem)),
  });
  const parents: ArchivedParent[] = [];
  for (const ref of await selectedParents(reader, source, selection)) {
    const ids = await reader.elementIds(ref.kind, ref.id);
    if (ids === undefined) continue;
    const elements: ElementState[] = [];
    for await (const element of reader.elements(ref.kind, ref.id, ids)) {
      const checked = checkElementBody(element.value, element.id);
      if ('problem' in checked) skipped.push({ parent: ref.id, element: element.id, reason: checked.problem });
      else elements.push({ id: element.id, attributes: checked.attributes });
    }
    const usable = new Set(elements.map((element) => element.id));
    parents.push({ ...ref, elements, unusable: ids.filter((id) => !usable.has(id)) });
  }
  return { parents, skipped };
}

/** The pages and layers to restore: all those archived, or those selected, each of which must be archived. */
async function selectedParents(
  reader: ArchivedPrototypeReader,
  source: ArchivedPrototype,
  selection: Selection,
): Promise<ParentRef[]> {
  const selecting = selection.pages !== undefined || selection.layers !== undefined;
  const refs: ParentRef[] = [];
  const chosen = new Set<string>();
  for (const kind of ['page', 'layer'] as const) {
    const archived = (await reader.listed(kind)) ?? [];
    const held = new Set(archived);
    const wanted = selecting ? ((kind === 'page' ? selection.pages : selection.layers) ?? []) : archived;
    for (const id of wanted) {
      if (!held.has(id)) {
        throw new RabbitError(
          'USAGE',
          `the archive has no ${kind} ${id} in prototype ${source.id} (revision ${source.revision}); ${heldWords(kind, archived)}`,
          {
            data: {
              next: `run again with --${kind} naming one of the ${kind}s it holds, or without --page and --layer for all of them`,
            },
          },
        );
      }
      if (!chosen.has(id)) refs.push({ kind, id });
      chosen.add(id);
    }
  }
  return refs;
}

/** The first few ids of a kind the archive holds, for a message about one it does not. */
function heldWords(kind: 'page' | 'layer', held: readonly string[]): string {
  if (held.length === 0) return `it holds no ${kind}s`;
  const shown = held.slice(0, 5).join(', ');
  return `it holds ${kind}s ${shown}${held.length > 5 ? ` and ${held.length - 5} more` : ''}`;
}

/** A problem of the reader as the restore reports it: under the page or layer, and the element, it is about. */
function skipOf({ ids, error }: EntryProblem): Skip {
  const parent = ids.page ?? ids.layer;
  const reason = error.code === 'ENTRY_MISSING' ? `the archive does not hold ${error.entry}` : error.message;
  return { ...(parent ? { parent } : {}), ...(ids.element ? { element: ids.element } : {}), reason };
}
