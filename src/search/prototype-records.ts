import type { ArchivedTexts, ElementTexts } from './archived-texts.js';
import { MAX_TEXT, type SearchRecord } from './search-record.js';
import { elementFolderOf } from '../api/entry-paths.js';

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

/**
 * Every text of one archived prototype (archived-texts.ts): its name, milestones, each
 * page's name then its elements, each layer at the first page that shows it, then its discussions.
 * A page's record comes before its elements', so a reader of the records knows the page's name by
 * the time it meets them. One page's elements are in memory at a time.
 */
export async function* prototypeRecords(
  prototype: { id: string; name: string | null },
  reader: ArchivedTexts,
  places: Places,
): AsyncGenerator<SearchRecord> {
  const at = (fragment: string) => `${places.overview}#${fragment}`;
  const record = (fields: Omit<SearchRecord, 'page' | 'layer' | 'id'> & Partial<SearchRecord>): SearchRecord => ({
    page: '',
    layer: '',
    id: '',
    ...fields,
    text: fields.text.slice(0, MAX_TEXT),
  });
  if (prototype.name !== null && prototype.name !== '')
    yield record({ kind: 'prototype', field: 'name', text: prototype.name, target: places.overview });
  for (const milestone of await reader.milestones()) {
    if (milestone.name === '') continue;
    const id = String(milestone.revision);
    yield record({
      kind: 'milestone',
      field: 'name',
      id,
      text: milestone.name,
      target: at(`prototype-${prototype.id}`),
    });
  }
  const seenLayers = new Set<string>();
  for (const pageId of await reader.pageIds()) {
    const page = await reader.page(pageId);
    const view = places.pageView(pageId);
    const onPage = (elementId: string) => (view === undefined ? at(`page-${pageId}`) : `${view}#${elementId}`);
    if (page.name !== null && page.name !== '')
      yield record({
        kind: 'page',
        field: 'name',
        page: pageId,
        text: page.name,
        target: view ?? at(`page-${pageId}`),
      });
    for (const element of await reader.elements(elementFolderOf('page', pageId)))
      for (const [field, text] of elementTexts(element))
        yield record({ kind: 'element', field, page: pageId, id: element.id, text, target: onPage(element.id) });
    for (const layerId of page.layerIds) {
      if (seenLayers.has(layerId)) continue;
      seenLayers.add(layerId);
      const name = await reader.layerName(layerId);
      if (name !== null && name !== '')
        yield record({
          kind: 'layer',
          field: 'name',
          page: pageId,
          layer: layerId,
          text: name,
          target: view ?? at(`page-${pageId}`),
        });
      for (const element of await reader.elements(elementFolderOf('layer', layerId)))
        for (const [field, text] of elementTexts(element))
          yield record({
            kind: 'element',
            field,
            page: pageId,
            layer: layerId,
            id: element.id,
            text,
            target: onPage(element.id),
          });
    }
  }
  for await (const discussion of reader.discussions()) {
    const base = {
      kind: 'discussion' as const,
      page: discussion.pageId ?? '',
      id: discussion.id,
      target: at(`discussion-${discussion.id}`),
    };
    if (discussion.title !== '') yield record({ ...base, field: 'title', text: discussion.title });
    for (const text of discussion.entries) if (text !== '') yield record({ ...base, field: 'entry', text });
    // Who wrote in it: "what did Anna say" is a search people make.
    for (const text of discussion.authors) if (text !== '') yield record({ ...base, field: 'author', text });
  }
}

/** The element's texts by field: its `text` as convert reads it, then every other string its JSON holds. */
export function elementTexts(element: ElementTexts): [string, string][] {
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
