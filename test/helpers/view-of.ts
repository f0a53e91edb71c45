import type { StoredFile } from '../../src/storage/stored-file.js';
import { viewRewrite } from '../../src/site/page-views.js';
import { pageView } from '../../src/site/view-build.js';

/**
 * One page's view built as the export builds it, from an HTML string: the one place the tests
 * call the page-view pipeline, so a change of its internal call is made here once.
 *
 * The page is page1 of prototype 3 served by service.example, with a sibling page2, an archived
 * PNG, an archived SVG (a document a browser would run if opened), a stylesheet with a view copy,
 * and an archived font.
 */
export const VIEW_SERVICE = { origin: 'https://service.example', basePath: '' };
export const VIEW_PATH = 'prototypes/3/r6/pages/page1.view.html';
export const PAGE_URL = 'https://service.example/rabbit/api/prototypes/3/pages/page1.html';

/** Archive entries a view may point at (all inside the extraction), by the request the page names. */
export const VIEW_ASSETS: ReadonlyMap<string, string> = new Map([
  ['/static/a.png', 'assets/0a0a.png'],
  ['/static/evil.svg', 'assets/5f1e.svg'],
  ['/static/s.css', 'assets/77aa.css'],
  ['/static/f.woff', 'assets/f0f0.woff'],
]);

export const VIEW_PAGES: ReadonlyMap<string, string> = new Map([
  ['/rabbit/api/prototypes/3/pages/page1.html', VIEW_PATH],
  ['/rabbit/api/prototypes/3/pages/page2.html', 'prototypes/3/r6/pages/page2.view.html'],
]);

export const VIEW_SHEETS: ReadonlyMap<string, string> = new Map([['/static/s.css', 'assets/77aa.view.css']]);

/** The view (UTF-8 text, byte order mark first) the export would write for a page rendering `html`. */
export function viewOf(html: string): string {
  const rewrite = viewRewrite(VIEW_PATH, PAGE_URL, VIEW_SERVICE, {
    pages: VIEW_PAGES,
    sheets: VIEW_SHEETS,
    catalog: {
      assets: new Map([...VIEW_ASSETS].map(([request, path]) => [request, { path } as StoredFile])),
      archived: new Map(),
      foreign: new Map(),
    },
  });
  return pageView(html, rewrite, VIEW_PATH);
}
