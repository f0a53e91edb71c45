import { RabbitError } from '../core/errors.js';
import { normalizeId, type IdKind } from './ids.js';
import { templatePieces } from './template-pieces.js';
import {
  API_PREFIX,
  ASSET_FOLDER,
  KIND_NAMES,
  RESOURCE_KINDS,
  REVISION_FOLDER,
  type KindName,
} from './resource-kinds.js';

/**
 * Builds and takes apart API sources and archive entry names by the table of resource kinds. A
 * name parses only when every segment is what its template says and every id has its documented
 * shape, so what parses is safe to use as a path: `..`, `%2e`, absolute names, overlong ids and
 * revisions that are not plain numbers do not.
 */
export interface PathIds {
  prototype?: string;
  page?: string;
  layer?: string;
  element?: string;
  discussion?: string;
}

export interface ParsedPath extends PathIds {
  kind: KindName;
  /** The revision folder an entry sits in (entry names only). */
  revision?: number;
  /** Which key's list of prototypes (`prototypes.key{key}.json`), 2 and up. */
  key?: number;
}

type Param = IdKind | 'revision' | 'key';
type Segment = string | { prefix: string; param: Param; suffix: string };
interface Template {
  kind: KindName;
  segments: Segment[];
}

/** Longer names than any the table builds (ids are at most 30 digits) are not looked at. */
const MAX_NAME = 512;
const REVISION = /^(?:0|[1-9]\d{0,15})$/;
const KEY = /^(?:[2-9]|[1-9]\d{1,3})$/;
const PLACEHOLDER = /^([^{}]*)\{(\w+)\}([^{}]*)$/;

function compile(kind: KindName, template: string): Template {
  const segments = template.split('/').map((segment): Segment => {
    const match = PLACEHOLDER.exec(segment);
    if (!match) return segment;
    const [, prefix = '', param = '', suffix = ''] = match;
    return { prefix, param: param as Param, suffix };
  });
  return { kind, segments };
}

/** Templates by their number of segments: a name is tried against those of its length only. */
function index(templates: Template[]): Map<number, Template[]> {
  const byLength = new Map<number, Template[]>();
  for (const template of templates) {
    const list = byLength.get(template.segments.length) ?? [];
    list.push(template);
    byLength.set(template.segments.length, list);
  }
  return byLength;
}

const ROOT_ENTRIES = index(
  KIND_NAMES.filter((k) => RESOURCE_KINDS[k].scope === 'account').map((k) => compile(k, RESOURCE_KINDS[k].entry)),
);
const REVISION_ENTRIES = index(
  KIND_NAMES.filter((k) => RESOURCE_KINDS[k].scope === 'revision').map((k) => compile(k, RESOURCE_KINDS[k].entry)),
);
const SOURCES = index(
  KIND_NAMES.flatMap((k) => {
    const api = RESOURCE_KINDS[k].api;
    return api === null ? [] : [compile(k, api)];
  }),
);

function valid(param: Param, text: string): boolean {
  if (param === 'revision') return REVISION.test(text) && Number.isSafeInteger(Number(text));
  if (param === 'key') return KEY.test(text);
  return normalizeId(param, text) === text;
}

function match(
  byLength: Map<number, Template[]>,
  parts: readonly string[],
  from: number,
  source?: { query: string | undefined },
): ParsedPath | undefined {
  candidates: for (const template of byLength.get(parts.length - from) ?? []) {
    // A source carries its kind's query; an entry name never has one.
    if (source !== undefined && RESOURCE_KINDS[template.kind].query !== source.query) continue;
    const { segments } = template;
    // The literal segments and the affixes first: most candidates fail there, before any id is
    // checked against its shape.
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as Segment;
      const part = parts[from + i] as string;
      if (typeof segment === 'string') {
        if (part !== segment) continue candidates;
        continue;
      }
      const { prefix, suffix } = segment;
      if (part.length <= prefix.length + suffix.length || !part.startsWith(prefix) || !part.endsWith(suffix))
        continue candidates;
    }
    const parsed: ParsedPath = { kind: template.kind };
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as Segment;
      if (typeof segment === 'string') continue;
      const { prefix, param, suffix } = segment;
      const part = parts[from + i] as string;
      const value = part.slice(prefix.length, part.length - suffix.length);
      if (!valid(param, value)) continue candidates;
      if (param === 'revision') parsed.revision = Number(value);
      else if (param === 'key') parsed.key = Number(value);
      else parsed[param] = value;
    }
    return parsed;
  }
  return undefined;
}

/** The builders for readers, which check ids for path safety alone (reader-names.ts says why). */
export {
  elementEntriesIn,
  elementEntriesOf,
  elementFolderOf,
  elementSourcesOf,
  entryNameOf,
  prototypeSourceFolderOf,
  revisionEntryNameOf,
  revisionFolderOf,
  sourceNameOf,
} from './reader-names.js';

/** What an archive entry is: its kind and ids, or undefined for a name the table does not build. */
export function parseEntryPath(name: string): ParsedPath | undefined {
  if (name.length > MAX_NAME) return undefined;
  const parts = name.split('/');
  if (parts.length < 4 || parts[0] !== 'prototypes') return match(ROOT_ENTRIES, parts, 0);
  const prototype = parts[1] as string;
  const folder = parts[2] as string;
  if (!valid('prototype', prototype) || !folder.startsWith('r') || !valid('revision', folder.slice(1))) return;
  const parsed = match(REVISION_ENTRIES, parts, 3);
  return parsed && { ...parsed, prototype, revision: Number(folder.slice(1)) };
}

/** What an entry below a revision's folder (`prototypes/{id}/r{rev}/`) is; it carries no prototype id. */
export function parseRevisionEntry(rest: string): ParsedPath | undefined {
  if (rest.length > MAX_NAME) return undefined;
  return match(REVISION_ENTRIES, rest.split('/'), 0);
}

/**
 * What every entry name of `kind` below a revision's folder starts with, up to its first id: a
 * name without it is no entry of the kind, and need not be parsed to tell (a reader looking for a
 * prototype's discussions among its hundred thousand element bodies).
 */
export function revisionEntryPrefix(kind: KindName): string {
  return templatePieces(RESOURCE_KINDS[kind].entry)[0] as string;
}

/** What an API source (a manifest `source`: `/rabbit/api/...`, with the query of an older page view) is. */
export function parseSource(source: string): ParsedPath | undefined {
  if (source.length > MAX_NAME || !source.startsWith(API_PREFIX)) return undefined;
  const [path = '', query, extra] = source.slice(API_PREFIX.length).split('?');
  if (extra !== undefined) return undefined;
  return match(SOURCES, path.split('/'), 0, { query });
}

/** What an API path below `prototypes/{id}/` is, as `diff` names a prototype's files. */
export function parseSourceBelowPrototype(rest: string): ParsedPath | undefined {
  if (rest.length > MAX_NAME) return undefined;
  const [path = '', query, extra] = rest.split('?');
  if (extra !== undefined) return undefined;
  const parsed = match(SOURCES, ['prototypes', '0', ...path.split('/')], 0, { query });
  if (parsed === undefined) return undefined;
  delete parsed.prototype;
  return parsed;
}

/** The prototype an API source or an entry name belongs to, if it names one. */
export function prototypeOf(sourceOrEntry: string): string | undefined {
  return (parseSource(sourceOrEntry) ?? parseEntryPath(sourceOrEntry))?.prototype;
}

/** Fills a template's placeholders, each checked against its shape: a bad id never becomes a path. */
function fill(template: string, ids: PathIds & { key?: number }, source: string, revision?: number): string {
  const pieces = templatePieces(template);
  let out = pieces[0] as string;
  for (let i = 1; i < pieces.length; i += 2) {
    const param = pieces[i] as Param;
    const value =
      param === 'key'
        ? ids.key === undefined
          ? undefined
          : String(ids.key)
        : param === 'revision'
          ? revision === undefined
            ? undefined
            : String(revision)
          : ids[param];
    if (value === undefined || !valid(param, value)) throw unsafePath(source);
    out += value + (pieces[i + 1] as string);
  }
  return out;
}

/** Where the service serves one resource of `kind`. */
export function sourceOf(kind: KindName, ids: PathIds): string {
  const { api, query } = RESOURCE_KINDS[kind];
  if (api === null) throw unsafePath(kind);
  return `${API_PREFIX}${fill(api, ids, kind)}${query === undefined ? '' : `?${query}`}`;
}

/** Where the archive keeps one resource of `kind` of a prototype's `revision`. */
export function entryPathOf(kind: KindName, ids: PathIds & { key?: number }, revision?: number): string {
  const { scope, entry } = RESOURCE_KINDS[kind];
  if (scope === 'account') return fill(entry, ids, kind);
  if (revision === undefined || !valid('revision', String(revision))) throw unsafePath(kind);
  return fill(REVISION_FOLDER, ids, kind, revision) + fill(entry, ids, kind);
}

/**
 * Whether an entry named `path` may hold what the service served at `source`: a source that is an
 * API path of a kind in the table must be in the entry the table builds for it, at the revision of
 * the manifest listing it when it is listed under one (another key's list of prototypes is that
 * list asked with another key), or be a page's asset. Readers map a source to its entry (links)
 * and an entry to what it is (diff, ls), so a manifest pairing them otherwise would have them say
 * what the archive is not. Any other source (a page asset outside the API, `generated`) is left to
 * the rules of its own.
 */
export function sourceAgreesWithEntry(
  source: string,
  path: string,
  listedUnder?: { prototype: string; revision: string },
): boolean {
  const served = parseSource(source);
  if (served === undefined || path.startsWith(ASSET_FOLDER)) return true;
  const entry = parseEntryPath(path);
  if (entry === undefined) return false;
  if (entry.kind === 'key-list') return served.kind === 'prototype-list';
  if (RESOURCE_KINDS[served.kind].scope === 'account') return entryPathOf(served.kind, served) === path;
  if (entry.revision === undefined) return false;
  if (
    listedUnder !== undefined &&
    (listedUnder.prototype !== served.prototype || listedUnder.revision !== String(entry.revision))
  )
    return false;
  return entryPathOf(served.kind, served, entry.revision) === path;
}

/**
 * How a kind made by rabbit-export (`generatedFrom`) is named from the entry it is made of: its
 * template and its source's differ only after their last placeholder, so the name is the
 * source's with its ending swapped (`pages/page1.html` -> `pages/page1.view.html`), and nothing
 * is parsed on the way.
 */
const GENERATED_ENDINGS = new Map(
  KIND_NAMES.flatMap((kind) => {
    const from = RESOURCE_KINDS[kind].generatedFrom;
    if (from === undefined) return [];
    const made = templatePieces(RESOURCE_KINDS[kind].entry);
    const source = templatePieces(RESOURCE_KINDS[from].entry);
    if (made.length !== source.length || made.slice(0, -1).some((piece, i) => piece !== source[i]))
      throw new Error(`internal: ${kind} is not named as ${from} with another ending`);
    return [[kind, { from: source.at(-1) as string, to: made.at(-1) as string }] as const];
  }),
);

/** The entry of generated `kind` made of the entry `source` (of the kind it is generated from). */
export function generatedPathOf(kind: KindName, source: string): string {
  const endings = GENERATED_ENDINGS.get(kind);
  if (endings === undefined || !source.endsWith(endings.from)) throw unsafePath(source);
  return source.slice(0, source.length - endings.from.length) + endings.to;
}

/** Where the archive keeps one resource of `kind` below its revision's folder. */
export function revisionEntryOf(kind: KindName, ids: PathIds): string {
  return fill(RESOURCE_KINDS[kind].entry, ids, kind);
}

/** How `diff` names a changed item, or undefined when it is named by its path. */
export function categoryIdOf(parsed: ParsedPath): string | undefined {
  const template = RESOURCE_KINDS[parsed.kind].categoryId;
  return template === undefined ? undefined : fill(template, parsed, parsed.kind);
}

export function unsafePath(source: string): RabbitError {
  return new RabbitError('BAD_ID', `refusing to archive ${JSON.stringify(source)}: not a safe path`, {
    source,
  });
}

/**
 * The id of the element a create answered with, from its `Location` (the URI of the new element:
 * absolute or not, `.json` or not, with a query or not). Only its last two segments are read, so
 * a service behind another base path is understood too.
 */
export function createdElementId(location: string): string | undefined {
  let path: string;
  try {
    path = new URL(location.trim(), 'http://location.invalid').pathname;
  } catch {
    return undefined;
  }
  const parts = path.split('/');
  const last = parts.at(-1) ?? '';
  if (parts.at(-2) !== 'elements') return undefined;
  const id = last.endsWith('.json') ? last.slice(0, -'.json'.length) : last;
  return valid('element', id) ? id : undefined;
}

/** The endings of the sources that carry a query: `.xhtml?mode=sketched`, `.xhtml?mode=plain`. */
const QUERY_ENDINGS = KIND_NAMES.flatMap((kind) => {
  const { api, query } = RESOURCE_KINDS[kind];
  return api === null || query === undefined ? [] : [`${api.slice(api.lastIndexOf('}') + 1)}?${query}`];
});

/**
 * A source without the query its kind carries (an older page view's `?mode=`), read on its ending
 * alone so that a manifest's checks see the path of any such source, shaped as the table's or not;
 * undefined when the source has no such query.
 */
export function sourcePathOf(source: string): string | undefined {
  if (!source.startsWith(API_PREFIX)) return undefined;
  // The ending's `?` must be the source's first.
  const at = source.indexOf('?');
  const ends = (ending: string) =>
    source.endsWith(ending) && at === source.length - ending.length + ending.indexOf('?');
  return QUERY_ENDINGS.some(ends) ? source.slice(0, at) : undefined;
}
