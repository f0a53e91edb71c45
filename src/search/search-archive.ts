import { isRabbitError, RabbitError } from '../core/errors.js';
import { refuseUnheld } from '../api/held-prototypes.js';
import type { Readable } from 'node:stream';
import type { WorkProgress } from '../core/counted-work.js';
import { openArchive, type Archive } from '../archive/open-archive.js';
import { opensAsManifest, type ManifestVisitor } from '../manifest/manifest-stream.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { ZipReader } from '../zip/zip-reader.js';
import type { ArchiveCatalog, ArchivedPrototype } from '../archive/archive-catalog.js';
import { foldText } from './fold.js';
import { hitContext, type HitContext } from './hit-context.js';
import { IndexTail } from './index-tail.js';
import { linesOf } from './part-lines.js';
import { prototypeRecords, type Places } from './prototype-records.js';
import {
  parsePartsFile,
  parseRecordLine,
  SEARCH_KINDS,
  SEARCH_PARTS_PATH,
  searchPartPath,
  type SearchKind,
  type SearchRecord,
} from './search-record.js';

export interface SearchOptions {
  /** The archive's path. */
  archive: string;
  query: string;
  /** Only these kinds of text (all when absent or empty). */
  kinds?: readonly SearchKind[];
  /** Only these prototypes (all when absent or empty). */
  prototypes?: readonly string[];
  /** Where a prototype's texts are shown in the archive (site/search-places.ts). */
  places(prototype: { id: string; revision: number; has(rest: string): boolean }): Places;
  /** False reads the bodies even when the archive has a search index (what an older archive gets). */
  useIndex?: boolean;
  signal?: AbortSignal;
  /**
   * How far the search is: the manifest read (entries, when the archive has no index to go by, or
   * its manifest must be read whole to be judged), then the prototypes searched of those to search.
   */
  onProgress?: (progress: WorkProgress<SearchStep>) => void;
}

export type SearchStep = 'manifest' | 'prototypes';

export interface SearchHit extends HitContext {
  kind: SearchKind;
  field: string;
  prototype: { id: string; name: string | null };
  page: { id: string; name: string } | null;
  layer: { id: string; name: string } | null;
  /** The element's, discussion's or milestone's id; '' for the others. */
  id: string;
  /** The archive entry that shows it, with a fragment. */
  target: string;
}

export interface SearchSummary {
  hits: number;
  /** Prototypes searched, and how: through the archive's index, or by reading their bodies. */
  prototypes: number;
  indexed: number;
  scanned: number;
}

export type SearchEvent = { type: 'hit'; hit: SearchHit } | { type: 'summary'; summary: SearchSummary };

/** A query longer than this is not something a person typed. */
export const MAX_QUERY = 200;

/** The folded query, or USAGE when nothing of it is left to look for. */
export function searchQuery(query: string): string {
  const folded = foldText(query.trim());
  if (folded === '' || Array.from(folded).length > MAX_QUERY)
    throw new RabbitError(
      'USAGE',
      `the query must hold 1 to ${MAX_QUERY} characters that are not only accents or spaces`,
    );
  return folded;
}

/**
 * Searches an archive's texts (see search-record.ts), handing out hits as they are found and a
 * summary last. Prototypes the export indexed are read from their index part, line by line, with
 * no more of the manifest read than its head (refuseUnlessManifest): the first hit comes before
 * the manifest of a large archive could have been read. The others (an archive from before the
 * index) are read from their bodies through the archive's catalog, a page at a time. Either way
 * memory holds one prototype's page and layer names, and a line or a page of elements.
 */
export async function* searchArchive(options: SearchOptions): AsyncGenerator<SearchEvent> {
  const query = searchQuery(options.query);
  const kinds = new Set<SearchKind>(options.kinds?.length ? options.kinds : SEARCH_KINDS);
  const only = options.prototypes?.length ? new Set(options.prototypes) : undefined;
  // The index is looked for at the directory's end first: a million-entry zip is opened whole
  // (seconds) only when a prototype must be read from its bodies, or when the tail holds no index
  // or no manifest that shows as one.
  const tail = options.useIndex === false ? undefined : await IndexTail.open(options.archive);
  let archive: Archive | undefined = tail ? undefined : await openArchive(options.archive);
  const opened = async (): Promise<Archive> => (archive ??= await openArchive(options.archive));
  let catalog: ArchiveCatalog | undefined;
  const progress = options.onProgress;
  // Each read of the manifest counts its own entries: the check below may read it whole before the catalog does.
  const counted = (): ManifestVisitor => {
    let read = 0;
    return { file: () => progress?.({ step: 'manifest', done: ++read, total: null }) };
  };
  const catalogOf = async (): Promise<ArchiveCatalog> =>
    (catalog ??= await (await opened()).catalog({ visitor: counted() }));
  const summary: SearchSummary = { hits: 0, prototypes: 0, indexed: 0, scanned: 0 };
  try {
    const index: IndexEntries | undefined =
      options.useIndex === false ? undefined : (tail ?? zipEntries((archive as Archive).zip));
    // An archive searched by its bodies has its manifest read whole first (the catalog): one
    // searched by its index must be a manifest's archive too.
    if (index?.has(SEARCH_PARTS_PATH)) await refuseUnlessManifest(tail, opened, counted());
    const indexed = index && (await indexedPrototypes(index));
    const ids = indexed ?? (await catalogOf()).prototypeIds();
    // An id the archive lacks is a mistake in the command, not a search with no hits.
    if (only) refuseUnheld(only, [...ids], { name: 'the archive', archive: options.archive });
    const total = only ? ids.filter((id) => only.has(id)).length : ids.length;
    for (const id of ids) {
      if (only && !only.has(id)) continue;
      if (options.signal?.aborted) throw new RabbitError('INTERRUPTED', 'the search was interrupted');
      progress?.({ step: 'prototypes', done: summary.prototypes, total });
      summary.prototypes++;
      let records: AsyncIterable<Candidate> | undefined;
      if (index && indexed && index.has(searchPartPath(id))) {
        summary.indexed++;
        records = indexRecords(index, id, query);
      } else {
        const prototype = (await catalogOf()).prototype(id);
        if (prototype === undefined) continue;
        summary.scanned++;
        records = scannedRecords(prototype, options.places(prototype), query);
      }
      for await (const hit of hitsOf(id, records, query, kinds)) {
        summary.hits++;
        yield { type: 'hit', hit };
      }
    }
    progress?.({ step: 'prototypes', done: total, total });
    yield { type: 'summary', summary };
  } finally {
    await catalog?.close();
    archive?.close();
    tail?.close();
  }
}

/** How much of the manifest is read for its identifying fields: the export's take a few hundred bytes. */
const MANIFEST_HEAD_BYTES = 64 * 1024;

/**
 * Refuses an archive whose manifest is missing or is not one, as ls and verify do, before anything
 * is read from its index. That costs the first hit little: the manifest's first bytes, read through
 * the tail (where the export writes it, after the index), hold the fields that say it is a manifest
 * of the format this version reads (opensAsManifest). Only when they do not, or when the tail has
 * no manifest, is the zip opened whole and its manifest looked at there, and then, if it still does
 * not show as one, read whole as every other command reads it: its error is theirs, word for word,
 * and a manifest that is one after all (its fields in another order) lets the search go on.
 *
 * What the rest of the manifest holds, and whether the index is the one it lists, is not read here:
 * that is the whole manifest, seconds at a million entries (docs/search.md, "What search checks").
 */
async function refuseUnlessManifest(
  tail: IndexTail | undefined,
  opened: () => Promise<Archive>,
  visitor: ManifestVisitor,
): Promise<void> {
  if (tail !== undefined && (await headShowsManifest(tail))) return;
  const archive = await opened();
  // A manifest the tail had is the one the whole zip reads too (but in a zip crafted with two), and
  // its head was judged already: what is wrong with it is the whole read's to say.
  if (!tail?.has(MANIFEST_PATH) && (await headShowsManifest(zipEntries(archive.zip)))) return;
  await archive.manifest(visitor);
}

async function headShowsManifest(entries: IndexEntries): Promise<boolean> {
  if (!entries.has(MANIFEST_PATH)) return false;
  try {
    return await opensAsManifest(await entries.openEntry(MANIFEST_PATH), MANIFEST_HEAD_BYTES);
  } catch (error) {
    // An entry that cannot be opened (its local header damaged): the whole read says so.
    if (isRabbitError(error)) return false;
    throw error;
  }
}

/** Where the index's entries are read from: the directory's tail (index-tail.ts), or the zip opened whole. */
interface IndexEntries {
  has(name: string): boolean;
  openEntry(name: string): Readable | Promise<Readable>;
  readEntry(name: string, maxBytes: number): Promise<Buffer>;
}

function zipEntries(zip: ZipReader): IndexEntries {
  return {
    has: (name) => zip.entries.has(name),
    openEntry: (name) => zip.openEntry(name),
    readEntry: (name, maxBytes) => zip.readEntry(name, maxBytes),
  };
}

/** A record that may match, or one that names a prototype, page or layer for the hits after it. */
interface Candidate {
  record: SearchRecord;
  /** Its folded text, when it was worth folding or reading. */
  folded: string | undefined;
}

/**
 * What one prototype's page and layer names may hold, in characters, ids included: far more than
 * any the export writes, and a bound on a part that is nothing but names (a deflated part of a few
 * megabytes can inflate to gigabytes of them). Past it a hit names its page or layer by id.
 */
const MAX_NAME_CHARS = 16 * 1024 * 1024;

async function* hitsOf(
  prototypeId: string,
  records: AsyncIterable<Candidate>,
  query: string,
  kinds: ReadonlySet<SearchKind>,
): AsyncGenerator<SearchHit> {
  let name: string | null = null;
  const pages = new Map<string, string>();
  const layers = new Map<string, string>();
  let nameChars = 0;
  const remember = (names: Map<string, string>, id: string, text: string): void => {
    if (nameChars + id.length + text.length > MAX_NAME_CHARS) return;
    nameChars += id.length + text.length;
    names.set(id, text);
  };
  for await (const { record, folded } of records) {
    if (record.kind === 'prototype' && name === null) name = record.text;
    if (record.kind === 'page' && record.field === 'name') remember(pages, record.page, record.text);
    if (record.kind === 'layer' && record.field === 'name') remember(layers, record.layer, record.text);
    if (!kinds.has(record.kind) || folded === undefined || !folded.includes(query)) continue;
    // Checked again on the text itself: an index that says otherwise does not make a hit.
    const context = hitContext(record.text, query);
    if (context === undefined) continue;
    yield {
      kind: record.kind,
      field: record.field,
      prototype: { id: prototypeId, name },
      page: record.page === '' ? null : { id: record.page, name: pages.get(record.page) ?? record.page },
      layer: record.layer === '' ? null : { id: record.layer, name: layers.get(record.layer) ?? record.layer },
      id: record.id,
      target: record.target,
      ...context,
    };
  }
}

/** The prototypes listed by the archive's search index, or undefined when it has none. */
async function indexedPrototypes(index: IndexEntries): Promise<string[] | undefined> {
  if (!index.has(SEARCH_PARTS_PATH)) return undefined;
  // 40 bytes an id: a list of a million prototypes.
  return parsePartsFile((await index.readEntry(SEARCH_PARTS_PATH, 40 * 1024 * 1024)).toString('utf8'));
}

/** Lines that name a prototype, page or layer: always read, whatever the query. */
const NAMING = ['["prototype",', '["page",', '["layer",'];

/**
 * One prototype's index part, streamed from the zip (whose CRC-32 checks it as it is read). Only
 * lines whose JSON text can hold the query are parsed: the query is escaped as JSON would write it,
 * and a folded text that holds the query holds its escaped form.
 */
async function* indexRecords(index: IndexEntries, id: string, query: string): AsyncGenerator<Candidate> {
  const needle = JSON.stringify(query).slice(1, -1);
  for await (const line of linesOf(await index.openEntry(searchPartPath(id)))) {
    if (!line.includes(needle) && !NAMING.some((prefix) => line.startsWith(prefix))) continue;
    const parsed = parseRecordLine(line);
    if (parsed) yield parsed;
  }
}

async function* scannedRecords(prototype: ArchivedPrototype, places: Places, query: string): AsyncGenerator<Candidate> {
  for await (const record of prototypeRecords(prototype, prototype, places)) {
    const folded = foldText(record.text);
    yield { record, folded: folded.includes(query) ? folded : undefined };
  }
}
