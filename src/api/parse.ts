import { parse as parseLossless } from 'lossless-json';
import { RabbitError } from '../core/errors.js';
import { describe, normalizeId, type IdKind } from './ids.js';
import { jsonText } from './json-body.js';

/** A parsed id list: the ids that fit their shape, and the raw values that did not. */
export interface IdList {
  ids: string[];
  rejected: string[];
}

export function parseJson(buffer: Buffer, source: string): unknown {
  return parseText(jsonText(buffer), source);
}

function parseText(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RabbitError('BAD_JSON', `GET ${source}: the body is not valid JSON`, { source, cause: error });
  }
}

/**
 * An id list read from its bytes (as served, or as archived) so that every integer id keeps the
 * digits the service wrote: JSON.parse turns 9007199254740993 into 9007199254740992, another
 * prototype's or discussion's id. Lists of string ids (pages, layers, elements) hold no numbers and
 * take the fast path; a list with a number in it is read again by lossless-json, which hands each
 * number over as its text. Should that reader refuse what JSON.parse accepted (it rejects
 * duplicate object keys), the JSON.parse value stands and an unsafe number in it is rejected.
 */
export function readIdList(buffer: Buffer, kind: IdKind, source: string, allowObjectForm = false): IdList {
  const text = jsonText(buffer);
  let value = parseText(text, source);
  if (Array.isArray(value) && value.some((item) => typeof item === 'number')) {
    try {
      value = parseLossless(text);
    } catch {
      // Kept as JSON.parse read it (see above).
    }
  }
  return parseIdList(value, kind, source, allowObjectForm);
}

/**
 * An id list as the API serves it: a JSON array of ids, or (older API, pages only) an object whose
 * keys are the ids and whose values are names. Duplicates are dropped; the list itself is archived
 * as served whatever it held.
 */
export function parseIdList(value: unknown, kind: IdKind, source: string, allowObjectForm = false): IdList {
  let raw: unknown[];
  if (Array.isArray(value)) raw = value;
  else if (allowObjectForm && isPlainObject(value)) raw = Object.keys(value);
  else throw new RabbitError('BAD_SHAPE', `GET ${source}: expected a JSON array of ${kind} ids`, { source });
  const ids: string[] = [];
  const rejected: string[] = [];
  const seen = new Set<string>();
  for (const item of raw) {
    const id = normalizeId(kind, item);
    if (id === undefined) rejected.push(describe(item));
    else if (!seen.has(id)) {
      seen.add(id);
      ids.push(id);
    }
  }
  return { ids, rejected };
}

export function requireObject(value: unknown, what: string, source: string): Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new RabbitError('BAD_SHAPE', `GET ${source}: expected a JSON object (${what})`, { source });
  }
  return value;
}

export interface PrototypeInfo {
  name: string | null;
  lastModification: number | null;
  lastUser: string | null;
}

/** The fields of a prototype's metadata the exporter relies on; the rest is kept as served. */
export function parsePrototype(value: unknown, source: string): PrototypeInfo {
  const object = requireObject(value, 'prototype metadata', source);
  const versions = object['versions'];
  if (versions !== undefined && versions !== null) {
    const milestones = isPlainObject(versions) ? versions['milestones'] : undefined;
    if (!isPlainObject(versions) || (milestones !== undefined && milestones !== null && !Array.isArray(milestones))) {
      throw new RabbitError('BAD_SHAPE', `GET ${source}: versions.milestones is not an array`, { source });
    }
  }
  const data = isPlainObject(object['prototypeData']) ? object['prototypeData'] : {};
  const name = data['name'];
  const lastModification = data['lastModification'];
  const lastUser = data['lastUser'];
  return {
    name: typeof name === 'string' ? name : null,
    lastModification:
      typeof lastModification === 'number' && Number.isFinite(lastModification) ? lastModification : null,
    lastUser: typeof lastUser === 'string' ? lastUser : null,
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
