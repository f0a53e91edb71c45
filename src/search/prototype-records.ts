import { ArchivedPrototypeReader, type PrototypeEntries } from '../archive/archived-prototype-reader.js';
import type { ElementRecord, PageRecord } from '../archive/archived-records.js';
import { MAX_TEXT, type SearchRecord } from './search-record.js';

/** Where a prototype's texts are shown: its overview page, and each page's view when the archive has one. */
export interface Places {
  /** The prototype's overview page, from the archive's root. */
  overview: string;
  /** The page's viewable copy, from the archive's root; undefined when the archive holds none. */
  pageView(pageId: string): string | undefined;
}

/**
 * Element fields that say where and what an element is, not what it reads: left out of the search.
 * Every other string an element's JSON holds is its text (the label, a placeholder, a tooltip).
 */
const NOT_TEXT = new Set(['id', 'type', 'target', 'position', 'dimensions', 'style']);
/** How deep into an element's JSON texts are looked for, and how many are kept: its JSON is hostile. */
const MAX_DEPTH = 4;
const MAX_FIELDS = 32;

type Fields = Omit<SearchRecord, 'page' | 'layer' | 'id'> & Partial<SearchRecord>;

/** A record, its text cut to what the index keeps. */
function record(fields: Fields): SearchRecord {
  return { page: '', layer: '', id: '', ...fields, text: fields.text.slice(0, MAX_TEXT) };
}

/**
 * Every text of one archived prototype, read by the archive's reader of a prototype
 * (archive/archived-prototype-reader.ts), which leaves out whatever is missing or damaged: its
 * name, milestones, each page's name then its elements, each layer at the first page that shows
 * it, then its discussions. A page's record comes before its elements', so a reader of the records
 * knows the page's name by the time it meets them. Records stream: a window of pages and of one
 * parent's elements is in memory at a time.
 */
export async function* prototypeRecords(
  prototype: { id: string; name: string | null },
  entries: PrototypeEntries,
  places: Places,
): AsyncGenerator<SearchRecord> {
  const reader = new ArchivedPrototypeReader(entries);
  if (prototype.name !== null && prototype.name !== '')
    yield record({ kind: 'prototype', field: 'name', text: prototype.name, target: places.overview });
  for (const milestone of (await reader.meta()).milestones) {
    if (milestone.name === '') continue;
    const target = `${places.overview}#prototype-${prototype.id}`;
    yield record({ kind: 'milestone', field: 'name', id: String(milestone.revision), text: milestone.name, target });
  }
  const seenLayers = new Set<string>();
  for await (const page of reader.pages((await reader.pageOrder()).ids))
    yield* pageRecords(reader, page, places, seenLayers);
  yield* discussionRecords(reader, places);
}

/** A page's name and elements, then those of each layer it is the first to show. */
async function* pageRecords(
  reader: ArchivedPrototypeReader,
  page: PageRecord,
  places: Places,
  seenLayers: Set<string>,
): AsyncGenerator<SearchRecord> {
  const view = places.pageView(page.id);
  const onPage = view ?? `${places.overview}#page-${page.id}`;
  const where = { page: page.id, view, onPage };
  if (page.name !== null && page.name !== '')
    yield record({ kind: 'page', field: 'name', page: page.id, text: page.name, target: onPage });
  yield* elementRecords(reader.elements('page', page.id), where, '');
  for (const layerId of page.layerIds) {
    if (seenLayers.has(layerId)) continue;
    seenLayers.add(layerId);
    const { name } = await reader.layer(layerId);
    if (name !== null && name !== '')
      yield record({ kind: 'layer', field: 'name', page: page.id, layer: layerId, text: name, target: onPage });
    yield* elementRecords(reader.elements('layer', layerId), where, layerId);
  }
}

async function* elementRecords(
  elements: AsyncIterable<ElementRecord>,
  where: { page: string; view: string | undefined; onPage: string },
  layer: string,
): AsyncGenerator<SearchRecord> {
  for await (const element of elements) {
    const target = where.view === undefined ? where.onPage : `${where.view}#${element.id}`;
    for (const [field, text] of elementTexts(element))
      yield record({ kind: 'element', field, page: where.page, layer, id: element.id, text, target });
  }
}

async function* discussionRecords(reader: ArchivedPrototypeReader, places: Places): AsyncGenerator<SearchRecord> {
  for await (const discussion of reader.discussions()) {
    const base = {
      kind: 'discussion' as const,
      page: discussion.pageId ?? '',
      id: discussion.id,
      target: `${places.overview}#discussion-${discussion.id}`,
    };
    if (discussion.title !== null && discussion.title !== '')
      yield record({ ...base, field: 'title', text: discussion.title });
    for (const { text } of discussion.entries)
      if (text !== null && text !== '') yield record({ ...base, field: 'entry', text });
    // Who wrote in it, each once: "what did Anna say" is a search people make.
    const authors = new Set(discussion.entries.map((entry) => entry.author));
    for (const text of authors) if (text !== null && text !== '') yield record({ ...base, field: 'author', text });
  }
}

/** The element's texts by field: its `text` as convert reads it, then every other string its JSON holds. */
export function elementTexts(element: Pick<ElementRecord, 'text' | 'value'>): [string, string][] {
  const out: [string, string][] = [];
  if (element.text !== null && element.text !== '') out.push(['text', element.text]);
  const walk = (node: unknown, path: string, depth: number): void => {
    if (out.length >= MAX_FIELDS || depth > MAX_DEPTH) return;
    if (typeof node === 'string') {
      if (node !== '' && path !== 'text') out.push([path, node]);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      if (depth === 0 && NOT_TEXT.has(key)) continue;
      walk(child, Array.isArray(node) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`, depth + 1);
    }
  };
  walk(element.value, '', 0);
  return out;
}
