import { parseEntryPath, parseSource, type ParsedPath } from '../api/entry-paths.js';
import { RENDERING_FORMATS, type RenderingFormat } from '../api/kind-lists.js';
import { API_PREFIX, RESOURCE_KINDS, type KindName } from '../api/resource-kinds.js';
import type { FileEntry } from '../manifest/types.js';

/**
 * Which old URL an archived file answers. Every entry the service served has its `source` (the
 * path it came from, never a query or key); page views asked for with `?mode=` are told apart by
 * their entry name; the editor's links (`/rabbit/edit/{id}#page/{pageId}`) lead to the offline
 * viewer's page when the archive has one, else to the page's rendering or its JSON.
 */
export type LinkKind = 'api' | RenderingFormat | 'asset' | 'editor' | 'editor-page';

/** Every kind of row, a rendering's by its format (the table of kinds lists them). */
export const LINK_KINDS: readonly LinkKind[] = ['api', ...RENDERING_FORMATS, 'asset', 'editor', 'editor-page'];

export interface LinkRow {
  kind: LinkKind;
  /** The URL's path on the service, without query or fragment. */
  path: string;
  /** The view mode the URL carries in its query (`mode=sketched|plain`), for the older page views. */
  mode?: string;
  /** `#page/{pageId}` for the editor's page links: it never reaches a server. */
  fragment?: string;
  /** The archive entry it now is. */
  target: string;
}

/**
 * The row an entry the service served becomes, by the kind of its source in the table: a
 * rendering by its format, any other kind as `api`; undefined for files rabbit-export made and
 * for another key's list (the same URL as the first's). What is not where the table puts what it
 * was served as, a source outside the API included, is a page's asset. `parsed` is the entry's
 * name parsed, when the caller has it.
 */
export function servedRow(entry: FileEntry, parsed = parseEntryPath(entry.path)): LinkRow | undefined {
  if (!entry.source.startsWith('/') || parsed?.kind === 'key-list') return undefined;
  const served = entry.source.startsWith(API_PREFIX) ? parseSource(entry.source) : undefined;
  if (served === undefined || parsed?.kind !== served.kind)
    return { kind: 'asset', path: entry.source, target: entry.path };
  const { format, query } = RESOURCE_KINDS[served.kind];
  const kind = format ?? 'api';
  if (query === undefined) return { kind, path: entry.source, target: entry.path };
  // An older page view's source keeps its mode, which its entry name tells apart (api/paths.ts).
  const mode = new URLSearchParams(query).get('mode') ?? undefined;
  const path = entry.source.slice(0, entry.source.indexOf('?'));
  return { kind, path, ...(mode === undefined ? {} : { mode }), target: entry.path };
}

/** A page's files the editor's link may lead to, best first: the offline view, the rendering, the JSON. */
export interface PageTargets {
  view?: string;
  png?: string;
  json?: string;
}

const PAGE_FILES: Partial<Record<KindName, keyof PageTargets>> = {
  'page-view': 'view',
  'page-png': 'png',
  page: 'json',
};

/** Notes the entry when it is one of a page's files (`parsed`: its name parsed, when the caller has it). */
export function notePageFile(
  entry: FileEntry,
  pages: Map<string, PageTargets>,
  parsed: ParsedPath | undefined = parseEntryPath(entry.path),
): void {
  const which = parsed === undefined ? undefined : PAGE_FILES[parsed.kind];
  if (parsed === undefined || which === undefined) return;
  const pageId = parsed.page as string;
  // The view is generated (source `generated`); the others must be what the service served.
  if (which === 'view' ? entry.generatedFrom === undefined : !entry.source.startsWith(API_PREFIX)) return;
  const targets = pages.get(pageId) ?? {};
  targets[which] = entry.path;
  pages.set(pageId, targets);
}

/** The editor's links of one prototype: the prototype itself, and each page by its fragment. */
export function editorRows(
  id: string,
  prototypeEntry: string | undefined,
  overview: string | undefined,
  pages: ReadonlyMap<string, PageTargets>,
): LinkRow[] {
  const rows: LinkRow[] = [];
  const first = [...pages.values()][0];
  const home = overview ?? first?.view ?? prototypeEntry;
  if (home !== undefined) rows.push({ kind: 'editor', path: `/rabbit/edit/${id}`, target: home });
  for (const [pageId, targets] of pages) {
    const target = targets.view ?? targets.png ?? targets.json;
    if (target !== undefined)
      rows.push({ kind: 'editor-page', path: `/rabbit/edit/${id}`, fragment: `#page/${pageId}`, target });
  }
  return rows;
}

/** The old URL in full: the service's base, the path, the view mode and the fragment. */
export function oldUrl(baseUrl: string, row: LinkRow): string {
  return `${baseUrl.replace(/\/+$/, '')}${row.path}${row.mode ? `?mode=${row.mode}` : ''}${row.fragment ?? ''}`;
}

/** Where the file is now: its entry name, or under `base` when the archive's files are served. */
export function newUrl(base: string | undefined, row: LinkRow): string {
  const path = row.target.split('/').map(encodeURIComponent).join('/');
  return base === undefined ? path : `${base.replace(/\/+$/, '')}/${path}`;
}
