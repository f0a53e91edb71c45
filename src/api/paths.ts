import { RabbitError } from '../core/errors.js';

/** The archive entry of the account's list of prototypes. */
export const PROTOTYPES_LIST_PATH = 'prototypes.json';

/** All API paths live under this prefix. */
export const API_PREFIX = '/rabbit/api/';

/**
 * Where a response body goes inside the archive.
 *   /rabbit/api/prototypes.json             -> prototypes.json
 *   /rabbit/api/prototypes/{id}.json        -> prototypes/{id}/r{rev}/prototype.json
 *   /rabbit/api/prototypes/{id}/{rest}      -> prototypes/{id}/r{rev}/{rest}
 * The source must already be built from validated ids; this re-checks every segment anyway,
 * because an entry name is the last place a hostile id could do harm.
 */
export function archivePathFor(source: string, revision: number): string {
  if (!source.startsWith(API_PREFIX)) throw unsafe(source);
  const rest = source.slice(API_PREFIX.length);
  if (rest === 'prototypes.json') return PROTOTYPES_LIST_PATH;
  if (!Number.isSafeInteger(revision) || revision < 0) throw unsafe(source);
  const meta = /^prototypes\/(\d+)\.json$/.exec(rest);
  if (meta) return `prototypes/${meta[1]}/r${revision}/prototype.json`;
  const nested = /^prototypes\/(\d+)\/(.+)$/.exec(rest);
  if (!nested) throw unsafe(source);
  const [, id, tail] = nested as unknown as [string, string, string];
  assertSafeRelative(tail, source);
  return `prototypes/${id}/r${revision}/${tail}`;
}

/**
 * The older page views (`.../pages/{page}.xhtml?mode=sketched|plain`) share their path, so the
 * mode goes into the entry name: `prototypes/{id}/r{rev}/pages/{page}.{mode}.xhtml`.
 */
export function pageViewPathFor(source: string, revision: number): string {
  const view = /^(.*\.xhtml)\?mode=(sketched|plain)$/.exec(source);
  if (!view) throw unsafe(source);
  return archivePathFor(view[1] as string, revision).replace(/\.xhtml$/, `.${view[2] as string}.xhtml`);
}

/** A relative entry name made only of plain segments: no `..`, no empty or absolute parts. */
export function assertSafeRelative(path: string, source = path): void {
  // One pattern for the whole path (it runs for every entry of a million-resource archive):
  // segments that start with a letter or digit, of letters, digits, '.', '_' and '-', and no '..'.
  if (!SAFE_PATH.test(path) || path.includes('..')) throw unsafe(source);
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

function unsafe(source: string): RabbitError {
  return new RabbitError('BAD_ID', `refusing to archive ${JSON.stringify(source)}: not a safe path`, {
    source,
  });
}

/**
 * An element's own JSON (`.../elements/{id}.json`, of a page or a layer): most of an account's
 * entries, and none of what the offline viewer reads.
 */
export function isElementBody(path: string): boolean {
  return ELEMENT_BODY.test(path);
}

const ELEMENT_BODY = /\/elements\/[^/]+\.json$/;
