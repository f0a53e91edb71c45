import { generatedPathOf } from '../api/entry-paths.js';

/**
 * Where a page rendering's viewable copy lies: apart from page-views.ts, which makes the copies
 * (and loads the HTML parser), so that a reader that only links to them (search) loads neither.
 * Named by the table of kinds, as the copy of its rendering.
 *
 * `prototypes/3/r6/pages/page1.html` -> `prototypes/3/r6/pages/page1.view.html`
 */
export function viewPathOf(pagePath: string): string {
  return generatedPathOf('page-view', pagePath);
}
