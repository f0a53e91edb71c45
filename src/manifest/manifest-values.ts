import type { Report } from './manifest-shape.js';
import { sourceAgreesWithEntry, sourcePathOf } from '../api/entry-paths.js';

/**
 * What the values of a manifest may hold, beyond their JSON type: only what the exporter itself
 * can write. Every reading command writes some of them into something else (a zip path into a
 * folder, a source into nginx or sed, the base URL into a comment line, any of them to a
 * terminal), so an archive someone hands over must not carry a line break, an escape sequence or a
 * path out of the folder in them. Each rule names the value's place when it refuses it.
 */

/** C0 and C1 controls, DEL, and the two characters JavaScript (and JSON readers after it) take for line ends. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** The same, with tab and newline allowed: a recorded error message may be several lines. */
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A path as a WHATWG URL parser leaves it (what the exporter records as a source): printable ASCII
 * without space, quotes, angle brackets, braces, backslash, `#` or `?`; anything else arrives
 * percent-encoded. Text past ASCII (a path built by hand, or by another writer) is let through
 * unless it is whitespace, a control or half of a surrogate pair: each output quotes it as text.
 */
const URL_PATH = /^\/[!$%&'()*+,\-./0-9:;=@A-Z[\]^_a-z|~]*$/;
const URL_PATH_PAST_ASCII =
  // eslint-disable-next-line no-control-regex
  /^\/(?:[!$%&'()*+,\-./0-9:;=@A-Z[\]^_a-z|~]|[^\u0000-\u00a0\u2028\u2029\ud800-\udfff\s])*$/u;
/** A `.` or `..` segment, written plainly or percent-encoded. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;
/** A `..`, `.` or empty segment of a relative path. */
const BAD_SEGMENT = /(?:^|\/)(?:\.{0,2})(?:\/|$)/;
/** A base URL is written into comments, sed patterns and RewriteRules: scheme, host, port and a path. */
const BASE_URL = /^https?:\/\/[!%&()*+,\-./0-9:;=@A-Z[\]_a-z~]+$/;
const GENERATED = 'generated';
/**
 * What the exporter writes, for a check in one pass: a million entries pay for these and nothing
 * else. Anything else (a `.` after a slash included) goes through the rules one by one.
 */
const PLAIN_ENTRY = /^[A-Za-z0-9_-][A-Za-z0-9._/-]*$/;
const PLAIN_SOURCE = /^\/[A-Za-z0-9._/-]*$/;
const isPlain = (value: string, pattern: RegExp) =>
  pattern.test(value) && !value.includes('/.') && !value.includes('//') && !value.endsWith('/');

/** The first control character of `value` as `U+000A`, or undefined. */
export function controlIn(value: string, allowLines = false): string | undefined {
  const found = (allowLines ? CONTROL_BUT_LINES : CONTROL).exec(value);
  return found === null
    ? undefined
    : `U+${(found[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `path` is not a relative zip path of plain segments, or undefined when it is one. */
export function entryPathProblem(path: string): string | undefined {
  if (isPlain(path, PLAIN_ENTRY)) return undefined;
  const control = controlIn(path);
  if (control !== undefined) return `holds a control character (${control})`;
  if (path.includes('\\')) return 'holds a backslash';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is an absolute path';
  const segment = BAD_SEGMENT.exec(path);
  if (segment !== null)
    return segment[0].includes('..') ? 'climbs out of the archive with ".."' : 'has an empty or "." segment';
  return undefined;
}

/** Why `source` is not a path on the service (or `generated`), or undefined when it is one. */
export function sourceProblem(source: string): string | undefined {
  if (source === GENERATED || isPlain(source, PLAIN_SOURCE)) return undefined;
  const control = controlIn(source);
  if (control !== undefined) return `holds a control character (${control})`;
  // The older page views keep their mode in the source (api/paths.ts, pageViewPathFor).
  const path = source.includes('?') ? (sourcePathOf(source) ?? source) : source;
  // Paths are ASCII as the exporter writes them: the pattern for text past ASCII is the slower one.
  if (!URL_PATH.test(path) && !URL_PATH_PAST_ASCII.test(path)) {
    return 'must be "generated" or a path on the service ("/..."), without spaces, quotes, backslashes, braces, "#" or a query';
  }
  if (DOT_SEGMENT.test(path)) return 'has a "." or ".." segment';
  if (path.includes('%') && /%(?![0-9A-Fa-f]{2})/.test(path)) return 'holds a "%" that starts no percent-escape';
  // Servers match the decoded path, and links writes it so into nginx and Apache rules: an escape
  // that decodes to a control or line separator is one no rule can hold, so no reader takes it.
  const decoded = path.includes('%') ? decodedControl(path) : undefined;
  if (decoded !== undefined) return `holds a percent-escaped control character (${decoded})`;
  return undefined;
}

/** The first control character the path's percent-escapes decode to; none for escapes that are no UTF-8. */
function decodedControl(path: string): string | undefined {
  try {
    return controlIn(decodeURIComponent(path));
  } catch {
    return undefined;
  }
}

/** Why `value` is not an http(s) base URL this tool could have been pointed at, or undefined. */
export function baseUrlProblem(value: string): string | undefined {
  const control = controlIn(value);
  if (control !== undefined) return `holds a control character (${control})`;
  if (!BASE_URL.test(value)) {
    return 'must be an http(s) URL without spaces, quotes, backslashes, braces, a query or a fragment';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  return undefined;
}

export function checkBaseUrl(where: string, value: string, at: Report): void {
  const problem = baseUrlProblem(value);
  if (problem !== undefined) at(where, problem);
}

/** Where a file entry is listed: a prototype's revision, or undefined for the account's own files. */
export interface Listing {
  prototype: string;
  revision: string;
}

/** The values of an entry whose members are of their types already (storage/file-entry.ts). */
export function checkEntryValues(
  here: string,
  entry: Record<string, unknown>,
  at: Report,
  listedUnder?: Listing,
): void {
  const path = entryPathProblem(entry.path as string);
  if (path !== undefined) return at(`${here}.path`, path);
  const source = sourceProblem(entry.source as string);
  if (source !== undefined) return at(`${here}.source`, source);
  if (!sourceAgreesWithEntry(entry.source as string, entry.path as string, listedUnder)) {
    const listing = listedUnder === undefined ? '' : ` listed under revision ${listedUnder.revision}`;
    return at(
      `${here}.source`,
      `names a resource the archive keeps elsewhere than ${JSON.stringify(entry.path)}${listing}`,
    );
  }
  if (typeof entry.generatedFrom === 'string') {
    const from = entryPathProblem(entry.generatedFrom);
    if (from !== undefined) return at(`${here}.generatedFrom`, from);
  }
  for (const key of ['contentType', 'lastModified'] as const) {
    const value = entry[key];
    const control = typeof value === 'string' ? controlIn(value) : undefined;
    if (control !== undefined) return at(`${here}.${key}`, `holds a control character (${control})`);
  }
}

/** A recorded error is printed by verify and ls: its source, code and id on one line, its message without escapes. */
export function checkErrorValues(where: string, error: Record<string, unknown>, at: Report): void {
  for (const key of ['source', 'code', 'id', 'message'] as const) {
    const value = error[key];
    const control = typeof value === 'string' ? controlIn(value, key === 'message') : undefined;
    if (control !== undefined) return at(`${where}.${key}`, `holds a control character (${control})`);
  }
}
