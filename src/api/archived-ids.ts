import { isSafeSegment } from './reader-names.js';

/**
 * The ids an archived list names, read leniently: readers of an archive show what they can of a
 * list that is not what the export would have accepted, rather than refuse the prototype. Both
 * forms the service used are taken: an array of ids, and the old `{"page2200": "name"}` object.
 * Only ids of letters and digits, and of a length a name can hold, are kept, since they go into
 * entry paths: a reader's builders refuse a longer one, which would stop the whole reader.
 */
export function archivedIdsOf(value: unknown): string[] {
  const ids = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? Object.keys(value) : [];
  return ids
    .filter((id) => typeof id === 'string' || typeof id === 'number')
    .map(String)
    .filter(isArchivedId);
}

/** An id a reader keeps from an archive: letters and digits, no longer than a name may be. */
export function isArchivedId(id: string): boolean {
  return /^[A-Za-z0-9]+$/.test(id) && isSafeSegment(id);
}
