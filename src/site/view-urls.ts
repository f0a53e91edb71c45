import type { HtmlRefKind } from './requisites/html-refs.js';
import { INERT_URL } from './view-css.js';
import { DRAWN_DATA } from './view-policy.js';

/**
 * What a reference in a view may be, judged from its text alone. No parser is needed for that, so
 * this module loads none: the export resolves references with it from the start of a run, and the
 * HTML parser loads only when the first view is built.
 */

/** What browsers and DOMPurify ignore or strip before they read a scheme. */
// eslint-disable-next-line no-control-regex
const IGNORED_IN_URL = /[\u0000-\u0020\u00a0\u1680\u180e\u2000-\u2029\u205f\u3000]/g;

/** The scheme a browser would read in `value`, lower case; undefined for a relative reference. */
export function schemeOf(value: string): string | undefined {
  const bare = value.replace(IGNORED_IN_URL, '');
  return /^([a-z][a-z0-9+.-]*):/i.exec(bare)?.[1]?.toLowerCase();
}

const ROOT = 'file:///archive/';

/**
 * Whether a reference a view holds loads or opens nothing outside the archive: a place in the page,
 * a relative path that stays below the archive's root, a drawn `data:` URL, the inert one, or (for
 * a link the reader clicks) a web or mail address. Judged independently of how it was produced.
 */
export function staysInside(value: string, kind: HtmlRefKind, viewPath: string): boolean {
  if (value.startsWith('#') || value === INERT_URL) return true;
  if (kind === 'resource' && DRAWN_DATA.test(value)) return true;
  if (kind === 'link' && /^(?:https?:\/\/[^/\\]|mailto:|tel:)/i.test(value)) return true;
  // Relative paths as the rewriting writes them: path characters only, no scheme, no host.
  if (!/^[A-Za-z0-9._~!$&'()*+,;=:@%/-]+(?:#[^\s]*)?$/.test(value) || /^[/\\]|^[a-z][a-z0-9+.-]*:/i.test(value))
    return false;
  const url = new URL(value, `${ROOT}${viewPath}`);
  return url.protocol === 'file:' && url.host === '' && url.pathname.startsWith('/archive/');
}
