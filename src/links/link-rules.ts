import type { FileEntry } from '../manifest/types.js';

/**
 * Which old URL an archived file answers. Every entry the service served has its `source` (the
 * path it came from, never a query or key); page views asked for with `?mode=` are told apart by
 * their entry name; the editor's links (`/rabbit/edit/{id}#page/{pageId}`) lead to the offline
 * viewer's page when the archive has one, else to the page's rendering or its JSON.
 */
export type LinkKind = 'api' | 'png' | 'html' | 'xhtml-sketched' | 'xhtml-plain' | 'asset' | 'editor' | 'editor-page';

export interface LinkRow {
  kind: LinkKind;
  /** The URL's path on the service, without query or fragment. */
  path: string;
  /** The view mode the URL carries in its query (`mode=sketched|plain`), for the older page views. */
  mode?: 'sketched' | 'plain';
  /** `#page/{pageId}` for the editor's page links: it never reaches a server. */
  fragment?: string;
  /** The archive entry it now is. */
  target: string;
}

const XHTML_VIEW = /\/pages\/[A-Za-z0-9]+\.(sketched|plain)\.xhtml$/;
/** The source of an older page view keeps its mode (src/api/paths.ts, pageViewPathFor). */
const PAGE_VIEW_SOURCE = /^(\/rabbit\/api\/.*\.xhtml)\?mode=(sketched|plain)$/;
const PAGE_FILE = /^prototypes\/(\d+)\/r\d+\/pages\/([A-Za-z0-9]+)\.(json|png|view\.html)$/;
const EXTRA_KEY_LIST = /^prototypes\.key\d+\.json$/;

/** The row an entry the service served becomes; undefined for files rabbit-export made or duplicates. */
export function servedRow(entry: FileEntry): LinkRow | undefined {
  if (!entry.source.startsWith('/') || EXTRA_KEY_LIST.test(entry.path)) return undefined;
  const view = PAGE_VIEW_SOURCE.exec(entry.source);
  if (view && XHTML_VIEW.test(entry.path)) {
    const mode = view[2] as 'sketched' | 'plain';
    return { kind: `xhtml-${mode}`, path: view[1] as string, mode, target: entry.path };
  }
  if (!entry.source.startsWith('/rabbit/api/')) return { kind: 'asset', path: entry.source, target: entry.path };
  const kind = entry.source.endsWith('.png') ? 'png' : entry.source.endsWith('.html') ? 'html' : 'api';
  return { kind, path: entry.source, target: entry.path };
}

/** A page's files the editor's link may lead to, best first: the offline view, the rendering, the JSON. */
export interface PageTargets {
  view?: string;
  png?: string;
  json?: string;
}

/** Notes the entry when it is one of a page's files; returns the page id it belongs to. */
export function notePageFile(entry: FileEntry, pages: Map<string, PageTargets>): void {
  const match = PAGE_FILE.exec(entry.path);
  if (!match) return;
  const pageId = match[2] as string;
  const which = match[3] === 'view.html' ? 'view' : (match[3] as 'json' | 'png');
  // The view is generated (source `generated`); the others must be what the service served.
  if (which === 'view' ? entry.generatedFrom === undefined : !entry.source.startsWith('/rabbit/api/')) return;
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
