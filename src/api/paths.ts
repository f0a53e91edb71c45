import { KIND_NAMES, RESOURCE_KINDS } from './resource-kinds.js';
import { entryPathOf, parseEntryPath, parseSource, unsafePath, type ParsedPath } from './entry-paths.js';
import { templatePieces } from './template-pieces.js';
import type { KindName } from './resource-kinds.js';

export { API_PREFIX } from './resource-kinds.js';

/** The archive entry of the account's list of prototypes. */
export const PROTOTYPES_LIST_PATH = RESOURCE_KINDS['prototype-list'].entry;

/**
 * Where a response body goes inside the archive (the table in resource-kinds.ts says where each
 * kind goes). The source must already be built from validated ids; it is parsed again anyway,
 * because an entry name is the last place a hostile id could do harm. The older page views have
 * their own function, pageViewPathFor.
 */
export function archivePathFor(source: string, revision: number): string {
  const parsed = parseSource(source);
  if (parsed === undefined || RESOURCE_KINDS[parsed.kind].query !== undefined) throw unsafePath(source);
  if (!Number.isSafeInteger(revision) || revision < 0) throw unsafePath(source);
  return entryPathOf(parsed.kind, parsed, revision);
}

/**
 * The older page views (`.../pages/{page}.xhtml?mode=sketched|plain`) share their path, so the
 * mode goes into the entry name: `prototypes/{id}/r{rev}/pages/{page}.{mode}.xhtml`.
 */
export function pageViewPathFor(source: string, revision: number): string {
  const parsed = parseSource(source);
  if (parsed === undefined || RESOURCE_KINDS[parsed.kind].query === undefined) throw unsafePath(source);
  if (!Number.isSafeInteger(revision) || revision < 0) throw unsafePath(source);
  return entryPathOf(parsed.kind, parsed, revision);
}

/** A relative entry name made only of plain segments: no `..`, no empty or absolute parts. */
export function assertSafeRelative(path: string, source = path): void {
  // One pattern for the whole path (it runs for every entry of a million-resource archive):
  // segments that start with a letter or digit, of letters, digits, '.', '_' and '-', and no '..'.
  if (!SAFE_PATH.test(path) || path.includes('..')) throw unsafePath(source);
}

const SAFE_PATH = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export function isSafeEntryName(name: string): boolean {
  try {
    assertSafeRelative(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * An element's own JSON (`.../elements/{id}.json`, of a page or a layer): most of an account's
 * entries, and none of what the offline viewer reads.
 */
export function isElementBody(file: EntryName): boolean {
  const kind = entryKindOf(file);
  return kind === 'page-element' || kind === 'layer-element';
}

/** An entry's name, and what it is when whoever built the name said so (see StoredFile's `parsed`). */
export interface EntryName {
  path: string;
  parsed?: ParsedPath;
}

/** The kind of an entry: as its builder gave it, or parsed from its name. */
export function entryKindOf(file: EntryName): KindName | undefined {
  return (file.parsed ?? parseEntryPath(file.path))?.kind;
}

/** The endings of the entries whose body is a PNG (`.png`), from the table. */
const PNG_ENDINGS = [
  ...new Set(
    KIND_NAMES.filter((kind) => RESOURCE_KINDS[kind].body === 'png').map(
      (kind) => templatePieces(RESOURCE_KINDS[kind].entry).at(-1) as string,
    ),
  ),
];

/**
 * Whether an entry is of a kind whose body is a PNG: by its kind when its builder said, else by the
 * ending the table gives such entries. Asked of every entry as the zip is written, so it parses
 * nothing.
 */
export function isPngEntry(file: EntryName): boolean {
  if (file.parsed !== undefined) return RESOURCE_KINDS[file.parsed.kind].body === 'png';
  return PNG_ENDINGS.some((ending) => file.path.endsWith(ending));
}
