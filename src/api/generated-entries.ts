import { normalizeId } from './ids.js';
import { isSafeSegment } from './reader-names.js';
import { ASSET_FOLDER } from './resource-kinds.js';
import { RabbitError } from '../core/errors.js';
import { templatePieces } from './template-pieces.js';

/**
 * The entries the service did not serve under a name of their own, beside the table of resource
 * kinds (resource-kinds.ts): the manifest, the offline viewer's pages and search index, and the
 * page assets, which are named by the hash of their body. Their names are built and parsed here
 * alone, as the resources' are in entry-paths.ts; docs/archive-format.md lists them.
 *
 * Templates name what varies in braces: `{prototype}` (a prototype's id), `{sha256}` (64 hex
 * digits) and `{ext}` (an asset's extension, from its Content-Type).
 */
export type GeneratedName =
  'manifest' | 'index' | 'overview' | 'search-index' | 'search-part' | 'search-box' | 'asset' | 'view-css';

export interface GeneratedEntry {
  entry: string;
}

const SEARCH = 'search/';

export const GENERATED_ENTRIES: Readonly<Record<GeneratedName, GeneratedEntry>> = {
  manifest: { entry: 'manifest.json' },
  /** The offline viewer's top page: the prototypes. */
  index: { entry: 'index.html' },
  /** One prototype's page of the viewer, beside index.html rather than among what the service served. */
  overview: { entry: 'overview/prototype-{prototype}.html' },
  /** The list of prototypes the search index has a part for: present when the export wrote an index. */
  'search-index': { entry: `${SEARCH}index.js` },
  'search-part': { entry: `${SEARCH}prototype-{prototype}.js` },
  'search-box': { entry: `${SEARCH}search-box.js` },
  /** What a page loads from the service host, by the hash of its body. */
  asset: { entry: `${ASSET_FOLDER}{sha256}.{ext}` },
  /** A stylesheet's copy whose references point into the archive, by the hash of the URL it was served at. */
  'view-css': { entry: `${ASSET_FOLDER}{sha256}.view.css` },
};

export const GENERATED_NAMES = Object.keys(GENERATED_ENTRIES) as GeneratedName[];

/** The folder of the search index: every entry in it is one of the index's. */
export const SEARCH_FOLDER = SEARCH;

export interface GeneratedIds {
  prototype?: string;
  sha256?: string;
  ext?: string;
}

type Param = keyof GeneratedIds;

const SHA256 = /^[0-9a-f]{64}$/;
const EXT = /^[a-z0-9]{1,16}$/;

/**
 * Whether `text` may stand for `param` in a name. A prototype's id is checked for path safety
 * alone when a name is built (a reader builds names for the ids of an archive someone handed
 * over, read leniently, as reader-names.ts does), and must have the id's shape when a name is
 * parsed, as an export names them.
 */
function fits(param: Param, text: string, parsing: boolean): boolean {
  if (param === 'sha256') return SHA256.test(text);
  if (param === 'ext') return EXT.test(text);
  return parsing ? normalizeId('prototype', text) === text : isSafeSegment(text);
}

/** The entry of `name`; throws BAD_ID for an id or hash that makes no safe name. */
export function generatedEntryOf(name: GeneratedName, ids: GeneratedIds = {}): string {
  const pieces = templatePieces(GENERATED_ENTRIES[name].entry);
  let out = pieces[0] as string;
  for (let i = 1; i < pieces.length; i += 2) {
    const param = pieces[i] as Param;
    const value = ids[param] ?? '';
    if (!fits(param, value, false)) {
      throw new RabbitError('BAD_ID', `${JSON.stringify(value)} is not a safe ${param} in a name`, { id: value });
    }
    out += value + (pieces[i + 1] as string);
  }
  return out;
}

/**
 * The text before and after the one placeholder of `name`'s template: what a script the archive
 * carries (the search box) puts around an id it has to name the entry.
 */
export function generatedAffixes(name: GeneratedName): { prefix: string; suffix: string } {
  const pieces = templatePieces(GENERATED_ENTRIES[name].entry);
  if (pieces.length !== 3) throw new Error(`internal: ${name} is not named by one placeholder`);
  return { prefix: pieces[0] as string, suffix: pieces[2] as string };
}

export interface ParsedGenerated extends GeneratedIds {
  name: GeneratedName;
}

/** The longest name the table builds: a longer one is not looked at. */
const MAX_NAME = 512;

/** What an entry the table above names is, or undefined for any other name. */
export function parseGeneratedEntry(path: string): ParsedGenerated | undefined {
  if (path.length > MAX_NAME) return undefined;
  for (const name of GENERATED_NAMES) {
    const ids = matchPieces(templatePieces(GENERATED_ENTRIES[name].entry), path);
    if (ids !== undefined) return { name, ...ids };
  }
  return undefined;
}

/**
 * The values of a template's placeholders in `path`, each up to where the literal text after it
 * starts (the last one: up to the template's ending), and each of its shape.
 */
function matchPieces(pieces: readonly string[], path: string): GeneratedIds | undefined {
  const head = pieces[0] as string;
  if (pieces.length === 1) return path === head ? {} : undefined;
  const tail = pieces.at(-1) as string;
  if (!path.startsWith(head) || !path.endsWith(tail) || path.length < head.length + tail.length) return undefined;
  const ids: GeneratedIds = {};
  let at = head.length;
  const end = path.length - tail.length;
  for (let i = 1; i < pieces.length; i += 2) {
    const param = pieces[i] as Param;
    const next = pieces[i + 1] as string;
    const stop = i + 2 >= pieces.length ? end : path.indexOf(next, at);
    if (stop < at || stop > end) return undefined;
    const value = path.slice(at, stop);
    if (!fits(param, value, true)) return undefined;
    ids[param] = value;
    at = stop + next.length;
  }
  return at === path.length ? ids : undefined;
}
