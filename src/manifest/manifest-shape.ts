import { checkEntryMembers } from '../storage/file-entry.js';
import { checkBaseUrl, checkEntryValues, checkErrorValues, type Listing } from './manifest-values.js';
import { FORMAT_VERSION } from './types.js';

/**
 * The structure `verify` and `ls` rely on, checked by hand because ajv is a dev dependency only.
 * It follows schema/manifest.schema.json for required fields and types, but tolerates unknown
 * properties: an archive years old must still verify if a later 1.x writer added a field. Beyond
 * types, every value a command writes into something else (a path, a source, the base URL) is held
 * to what the exporter can write (see manifest-values.ts). Returns human-readable issues, empty
 * when the shape is right.
 */
export function checkManifestShape(value: unknown): string[] {
  const issues: string[] = [];
  const at = (where: string, what: string) => issues.push(`${where} ${what}`);
  if (!isObject(value)) return ['manifest.json is not a JSON object'];
  checkHead(value, at);
  if (isObject(value.prototypes)) {
    for (const [id, record] of Object.entries(value.prototypes)) checkPrototype(`prototypes.${id}`, id, record, at);
  }
  if (Array.isArray(value.files)) value.files.forEach((file, i) => checkFile(`files[${i}]`, file, at));
  if (Array.isArray(value.errors)) value.errors.forEach((error, i) => checkError(`errors[${i}]`, error, at));
  return issues;
}

/**
 * The top-level fields, with `prototypes`, `files` and `errors` checked for their type only: a
 * streaming reader checks what they hold piece by piece as it goes (see manifest-stream.ts).
 */
export function checkHead(value: Record<string, unknown>, at: Report): void {
  checkIdentity(value, at);
  if (!isObject(value.prototypes)) at('prototypes', 'must be an object');
  if (!Array.isArray(value.files)) at('files', 'must be an array');
  if (!Array.isArray(value.errors)) at('errors', 'must be an array');
  if (value.stats !== undefined) {
    const stats = value.stats;
    const counts = ['requests', 'retries', 'bytes', 'files'];
    if (!isObject(stats) || counts.some((key) => !isCount(stats[key])))
      at('stats', `must hold counts ${counts.join(', ')}`);
  }
}

/**
 * The top-level fields that say what the document is, in which format, and from which run: the
 * export writes them first, so they are a manifest's first few hundred bytes.
 */
export const IDENTITY_FIELDS = ['formatVersion', 'tool', 'source', 'startedAt', 'finishedAt', 'complete'] as const;

/** The IDENTITY_FIELDS, as checkHead checks them (it calls this first). */
export function checkIdentity(value: Record<string, unknown>, at: Report): void {
  if (typeof value.formatVersion !== 'number') at('formatVersion', 'is missing');
  else if (value.formatVersion > FORMAT_VERSION) {
    at(
      'formatVersion',
      `is ${value.formatVersion}, newer than this tool reads (${FORMAT_VERSION}); update rabbit-export`,
    );
  } else if (value.formatVersion !== FORMAT_VERSION)
    at('formatVersion', `is ${value.formatVersion}, not ${FORMAT_VERSION}`);

  if (!isObject(value.tool) || typeof value.tool.name !== 'string' || typeof value.tool.version !== 'string') {
    at('tool', 'must be { name, version }');
  }
  if (!isObject(value.source) || typeof value.source.baseUrl !== 'string') at('source', 'must be { baseUrl }');
  else checkBaseUrl('source.baseUrl', value.source.baseUrl, at);
  for (const key of ['startedAt', 'finishedAt'] as const) {
    if (typeof value[key] !== 'string') at(key, 'must be a string');
  }
  if (typeof value.complete !== 'boolean') at('complete', 'must be true or false');
}

export type Report = (where: string, what: string) => void;

export function checkPrototype(where: string, id: string, record: unknown, at: Report): void {
  if (!/^\d+$/.test(id)) at(where, 'is not keyed by a prototype id');
  if (!isObject(record)) return at(where, 'must be an object');
  if (record.name !== null && typeof record.name !== 'string') at(`${where}.name`, 'must be a string or null');
  if (record.lastModification !== null && typeof record.lastModification !== 'number') {
    at(`${where}.lastModification`, 'must be a number or null');
  }
  if (record.lastUser !== undefined && record.lastUser !== null && typeof record.lastUser !== 'string') {
    at(`${where}.lastUser`, 'must be a string or null');
  }
  if (!isCount(record.revision)) at(`${where}.revision`, 'must be a non-negative integer');
  if (typeof record.complete !== 'boolean') at(`${where}.complete`, 'must be true or false');
  if (record.origin !== undefined) {
    const origin = record.origin;
    if (!isObject(origin) || (origin.mode !== 'fetched' && origin.mode !== 'reused')) {
      at(`${where}.origin`, 'must be { mode: "fetched" | "reused" }');
    }
  }
  if (!isObject(record.revisions)) return at(`${where}.revisions`, 'must be an object');
  for (const [revision, entry] of Object.entries(record.revisions)) {
    const here = `${where}.revisions.${revision}`;
    if (!/^\d+$/.test(revision)) at(here, 'is not keyed by a revision number');
    if (!isObject(entry)) {
      at(here, 'must be an object');
      continue;
    }
    if (entry.milestone !== null && !isObject(entry.milestone)) at(`${here}.milestone`, 'must be an object or null');
    checkFiles(`${here}.files`, entry.files, at, { prototype: id, revision });
  }
}

function checkFiles(where: string, files: unknown, at: Report, listedUnder?: Listing): void {
  if (!Array.isArray(files)) return at(where, 'must be an array');
  files.forEach((file, i) => checkFile(`${where}[${i}]`, file, at, listedUnder));
}

export function checkFile(here: string, file: unknown, at: Report, listedUnder?: Listing): void {
  if (!isObject(file)) return at(here, 'must be an object');
  let typed = true;
  checkEntryMembers(here, file, (where, what) => {
    typed = false;
    at(where, what);
  });
  if (typed) checkEntryValues(here, file, at, listedUnder);
}

export function checkError(where: string, error: unknown, at: Report): void {
  if (!isObject(error)) return at(where, 'must be an object');
  if (typeof error.source !== 'string') at(`${where}.source`, 'must be a string');
  if (typeof error.message !== 'string') at(`${where}.message`, 'must be a string');
  if (error.status !== undefined && !Number.isInteger(error.status)) at(`${where}.status`, 'must be an integer');
  if (error.attempts !== undefined && !isCount(error.attempts)) at(`${where}.attempts`, 'must be a count');
  for (const key of ['code', 'id'] as const) {
    if (error[key] !== undefined && typeof error[key] !== 'string') at(`${where}.${key}`, 'must be a string');
  }
  checkErrorValues(where, error, at);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
