/**
 * The policy every generated page of the viewer carries, from file:// (as a `<meta>`, first in the
 * head) and under `view` (as a header too). No script runs, and under `view` nothing outside the
 * archive may load. From file:// it is a second line only: Chromium's 'self' there matches any
 * file: URL, `file://host/...` (an SMB share on Windows) included, so what keeps a view inside
 * the archive is its rewriting (page-views.ts), which leaves no reference as written. `file:` is
 * not named: 'self' already lets the archive's own files load. `form-action` and `base-uri` do
 * not fall back to `default-src`: they are named, so a form cannot post anywhere and a `<base>`
 * the cleaning missed could not move the page's URLs.
 */
export const VIEW_CSP =
  "default-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; media-src 'self' data:; form-action 'none'; base-uri 'none'";

/**
 * Headers `view` sends with every answer. A header policy can do what a `<meta>` cannot: refuse
 * to be framed, and sandbox the page (no scripts, forms, popups or plugins even if markup slipped
 * through; same-origin kept so the archive's own images and stylesheets still load).
 */
export const VIEW_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': `${VIEW_CSP}; frame-ancestors 'none'; sandbox allow-same-origin`,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  'cache-control': 'no-cache',
};

/** `data:` URLs a view may draw with: images and fonts, nothing a browser would read as a document or a stylesheet. */
export const DRAWN_DATA = /^data:(?:image\/|font\/|application\/(?:x-)?font)/i;
