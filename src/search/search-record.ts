import { generatedEntryOf, SEARCH_FOLDER } from '../api/generated-entries.js';
import { ID_KINDS, type IdKind } from '../api/ids.js';
import { PART_CALLBACK, PARTS_CALLBACK } from './search-callbacks.js';

/**
 * What search finds: one text of an archived prototype (a name, an element's text, a discussion
 * entry) with where it belongs and the archive entry that shows it. The export writes these into
 * the archive as its search index (one file per prototype, `search/prototype-{id}.js`); an archive
 * without one is read record by record from its bodies (prototype-records.ts), with the same result.
 */
export type SearchKind = IdKind | 'milestone';
/** Each kind of item the service names by an id (ids.ts), and the milestones of a prototype's metadata. */
export const SEARCH_KINDS: readonly SearchKind[] = [...ID_KINDS, 'milestone'];

export interface SearchRecord {
  kind: SearchKind;
  /** Which text of it: `name`, `title`, `entry`, `text` or an element's other field. */
  field: string;
  /** The page it is on or opens ('' for none). */
  page: string;
  /** The layer it belongs to ('' for none). */
  layer: string;
  /** The element's, discussion's or milestone's id ('' for a prototype, page or layer). */
  id: string;
  /** The archive entry to open, with a fragment: a page view at the element, or an overview. */
  target: string;
  /** The text as archived, cut at MAX_TEXT. */
  text: string;
}

/**
 * Past this a text is cut, in the index and in a scan alike: what is searched, and the most a
 * record can weigh, whatever a body holds.
 */
export const MAX_TEXT = 4000;

/** The index's folder in the archive. */
export const SEARCH_DIR = SEARCH_FOLDER;
/** The list of indexed prototypes: present when the export wrote an index. */
export const SEARCH_PARTS_PATH = generatedEntryOf('search-index');

export function searchPartPath(prototypeId: string): string {
  return generatedEntryOf('search-part', { prototype: prototypeId });
}

/** The callbacks the files call when a page loads them with `<script src>` (fetch() of file:// is blocked). */
export { PART_CALLBACK, PARTS_CALLBACK };

/**
 * A part is a script of one record a line, so that it loads in the browser and streams line by
 * line in the command: the call's opening line, `[kind,field,page,layer,id,target,text,folded],`
 * per record, and the closing line.
 */
export function partHead(prototypeId: string): string {
  return `${PART_CALLBACK}(${JSON.stringify(prototypeId)},[\n`;
}

export const PART_TAIL = ']);\n';

export function recordLine(record: SearchRecord, folded: string): string {
  const { kind, field, page, layer, id, target, text } = record;
  // Line and paragraph separators are legal in JSON and script strings alike, but the command
  // reads the file line by line: written escaped, a record stays on its line.
  return `${JSON.stringify([kind, field, page, layer, id, target, text, folded]).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)},\n`;
}

/** A record line of a part read back; undefined for anything not of that shape (the file is the archive's, so hostile). */
export function parseRecordLine(line: string): { record: SearchRecord; folded: string } | undefined {
  const json = line.endsWith(',') ? line.slice(0, -1) : line;
  if (!json.startsWith('[')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 8 || !value.every((v) => typeof v === 'string')) return undefined;
  const [kind, field, page, layer, id, target, text, folded] = value as string[] as [
    SearchKind,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!(SEARCH_KINDS as readonly string[]).includes(kind)) return undefined;
  return { record: { kind, field, page, layer, id, target, text: text.slice(0, MAX_TEXT) }, folded };
}

export function partsFile(prototypeIds: readonly string[]): string {
  return `${PARTS_CALLBACK}([\n${prototypeIds.map((id) => JSON.stringify(id)).join(',\n')}\n]);\n`;
}

/**
 * The ids a parts file lists, in its order, each once: ids not of the archive's shape are left
 * out, and so is an id listed again (a file naming one big part a million times would have it
 * searched a million times).
 */
export function parsePartsFile(text: string): string[] {
  const ids = new Set<string>();
  for (const line of text.split('\n')) {
    const id = /^"([0-9]{1,40})",?$/.exec(line)?.[1];
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}
