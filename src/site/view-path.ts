/**
 * Where a page rendering's viewable copy lies: apart from page-views.ts, which makes the copies
 * (and loads the HTML parser), so that a reader that only links to them (search) loads neither.
 *
 * `prototypes/3/r6/pages/page1.html` -> `prototypes/3/r6/pages/page1.view.html`
 */
export function viewPathOf(pagePath: string): string {
  return pagePath.replace(/\.html$/, '.view.html');
}
