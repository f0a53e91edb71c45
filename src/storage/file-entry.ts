import { jsonNumber, jsonString } from '../core/json-text.js';

/** One file of the archive as the manifest lists it, and as the journal records a stored body. */
export interface FileEntry {
  /** Entry name inside the zip. */
  path: string;
  /**
   * The path it was served from on the service host, without query string (never the key; an
   * older page view keeps its `?mode=sketched|plain`, which tells the two apart): an API
   * path, or for a page asset (`assets/...`) its path outside the API. `generated` for files
   * rabbit-export made itself (see generatedFrom).
   */
  source: string;
  sha256: string;
  size: number;
  contentType: string;
  /** The `Last-Modified` header as served, or null when the service sent none. */
  lastModified: string | null;
  /**
   * Only on a body the service sent with an API key of the run in it: how many times a key was
   * replaced by `REDACTED-API-KEY` (core/secret-marker.ts). `sha256` and `size` are those of the
   * bytes stored, after the replacement.
   */
  keyRedactions?: number;
  /**
   * When the body was fetched (ISO 8601, UTC), on bodies fetched by a run that records it; older
   * archives leave it out, and their bodies were fetched between the manifest's startedAt and
   * finishedAt. A body reused by `export --since` keeps the time it was first fetched.
   */
  fetchedAt?: string;
  /**
   * Only on files rabbit-export generated (the offline viewer): the entry they were made from, e.g.
   * the raw page a `.view.html` copy rewrites; `manifest.json` for index.html, made from the whole.
   */
  generatedFrom?: string;
}

/**
 * A manifest file entry's members, in the order every writer puts them, with their JSON types:
 * the one definition the entry line (manifest/archive-model.ts), the journal's record (journal.ts),
 * the shape check (manifest/manifest-shape.ts) and the catalog of a read archive
 * (archive/listed-entries.ts) follow. FileEntry above and `fileEntry` in schema/manifest.schema.json
 * are held to it by the compiler (below) and by a round-trip test (test/storage/file-entry.test.ts).
 * `path` is first: readers of entry lines find it at the start (manifest/archive-model.ts, pathOfLine).
 */
export const FILE_ENTRY_MEMBERS = [
  { name: 'path', type: 'name', required: true, served: false },
  { name: 'source', type: 'name', required: true, served: true },
  { name: 'sha256', type: 'sha256', required: true, served: true },
  { name: 'size', type: 'count', required: true, served: true },
  { name: 'contentType', type: 'name', required: true, served: true },
  { name: 'lastModified', type: 'string-or-null', required: true, served: true },
  { name: 'keyRedactions', type: 'count', required: false, served: true },
  { name: 'fetchedAt', type: 'name', required: false, served: true },
  { name: 'generatedFrom', type: 'name', required: false, served: false },
] as const satisfies readonly Member[];

interface Member {
  name: keyof FileEntry;
  /** `name`: a non-empty string; `count`: a non-negative safe integer. */
  type: 'name' | 'sha256' | 'count' | 'string-or-null';
  /** Present in every entry; an optional member is left out when it has no value. */
  required: boolean;
  /** Says what the service served (the members a body's records share: the entry line, the journal). */
  served: boolean;
}

type MemberName = (typeof FILE_ENTRY_MEMBERS)[number]['name'];
type RequiredName = Extract<(typeof FILE_ENTRY_MEMBERS)[number], { required: true }>['name'];
type RequiredOf<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];
/** Fails to compile when the table and FileEntry name different members or disagree on which are required. */
const sameMembers: [MemberName, RequiredName] extends [keyof FileEntry, RequiredOf<FileEntry>]
  ? [keyof FileEntry, RequiredOf<FileEntry>] extends [MemberName, RequiredName]
    ? true
    : never
  : never = true;
void sameMembers;

const SERVED = FILE_ENTRY_MEMBERS.filter((member) => member.served);

/** What a shape check says of a member whose value is not of its type. */
const MUST: Record<Member['type'], string> = {
  name: 'must be a non-empty string',
  sha256: 'must be 64 lowercase hex digits',
  count: 'must be a non-negative integer',
  'string-or-null': 'must be a string or null',
};

function isOfType(type: Member['type'], value: unknown): boolean {
  switch (type) {
    case 'name':
      return typeof value === 'string' && value !== '';
    case 'sha256':
      return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
    case 'count':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'string-or-null':
      return value === null || typeof value === 'string';
  }
}

/** Reports each member of `entry` that is missing or not of its type, as `where.member what`. */
export function checkEntryMembers(
  here: string,
  entry: Record<string, unknown>,
  at: (where: string, what: string) => void,
): void {
  for (const member of FILE_ENTRY_MEMBERS) {
    const value = entry[member.name];
    if (value === undefined && !member.required) continue;
    if (!isOfType(member.type, value)) at(`${here}.${member.name}`, MUST[member.type]);
  }
}

/** Whether a record holds the served members, each of its type (the journal's records); optional ones may be absent. */
export function hasServedMembers(record: Record<string, unknown>): boolean {
  return SERVED.every(
    (member) => (!member.required && record[member.name] === undefined) || isOfType(member.type, record[member.name]),
  );
}

/**
 * Pushes the members of `entry` from `from` on, each as `,"name":value` with its JSON text as
 * JSON.stringify writes it (core/json-text.ts), in the table's order; optional members only when
 * set. Joined, an entry's are its compact JSON without the braces and the first comma.
 */
function pushMembers(parts: string[], entry: FileEntry, which: readonly Member[]): void {
  for (const member of which) {
    const value = entry[member.name];
    if (value === undefined) continue;
    parts.push(`,"${member.name}":`, typeof value === 'number' ? jsonNumber(value) : jsonString(value));
  }
}

/** The compact JSON of an entry, its members in the table's order: `{"path":...}` without its closing brace. */
export function entryMembersText(entry: FileEntry): string[] {
  const parts: string[] = [];
  pushMembers(parts, entry, FILE_ENTRY_MEMBERS);
  parts[0] = (parts[0] as string).slice(1);
  parts.unshift('{');
  return parts;
}

/**
 * The members a body's records share (the manifest's entry line, the journal's record), in the
 * table's order, each after a comma: where it was served from and what was served.
 */
export function pushServedMembers(parts: string[], file: FileEntry): void {
  pushMembers(parts, file, SERVED);
}
