import { escapeAttribute } from '../core/xml-escape.js';
import { SEARCH_BOX_SCRIPT } from './search-box.generated.js';
import { generatedAffixes, generatedEntryOf } from '../api/generated-entries.js';
import { SEARCH_PARTS_PATH } from '../search/search-record.js';

/** The box's script: one file of the archive, the only script the overview pages may run. */
export const SEARCH_BOX_PATH = generatedEntryOf('search-box');

/**
 * The search box of index.html and the overview pages. `root` leads from the page to the
 * archive's root; `prototypeId` keeps an overview page's box to its prototype. The query is the
 * page's `?q=`, so a search can be bookmarked.
 */
export function searchBoxHtml(root: string, prototypeId?: string): string {
  const scope = prototypeId === undefined ? '' : ` data-prototype="${escapeAttribute(prototypeId)}"`;
  const label = prototypeId === undefined ? 'Search the archive' : 'Search this prototype';
  return `<form class="search" role="search" id="search"><label>${label} <input type="search" name="q" id="search-q" autocomplete="off" spellcheck="false" placeholder="names, labels, discussions"></label> <output id="search-status"></output></form>
<ol class="hits" id="search-hits"></ol>
<script src="${escapeAttribute(root + SEARCH_BOX_PATH)}" data-root="${escapeAttribute(root)}"${scope}${indexPlaces()}></script>`;
}

/** Where the script finds the index's list and parts: the table's names, handed to the browser. */
function indexPlaces(): string {
  const part = generatedAffixes('search-part');
  return ` data-parts="${escapeAttribute(SEARCH_PARTS_PATH)}" data-part-prefix="${escapeAttribute(part.prefix)}" data-part-suffix="${escapeAttribute(part.suffix)}"`;
}

/**
 * The script (src/site/browser/search-box.ts, bundled with the command's own folding by
 * scripts/bundle-browser.mjs): what the export stores as `search/search-box.js` and `view` serves
 * under that name.
 */
export function searchBoxScript(): string {
  return SEARCH_BOX_SCRIPT;
}
