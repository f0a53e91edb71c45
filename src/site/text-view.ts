import { escapeText } from '../core/xml-escape.js';
import { VIEW_CSP } from './view-policy.js';

/** At most this much of a page's text goes into the view that replaces a view failing its check. */
const TEXT_VIEW_CHARS = 1 << 20;

/**
 * What stands in for a view that failed its check: the page's text, escaped, in a page that can
 * neither act nor load anything, and the reason to look at the raw rendering beside it.
 */
export function textView(pageText: string): string {
  const text = pageText
    .replace(/[ \t\r\n\f]+/g, ' ')
    .trim()
    .slice(0, TEXT_VIEW_CHARS);
  return (
    `\ufeff<!DOCTYPE html><html><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${VIEW_CSP}">` +
    `<meta name="referrer" content="no-referrer"><title>Text of the page</title></head><body>` +
    `<p>This page could not be shown as it was drawn and stay safe to open, so only its text is ` +
    `shown. The raw rendering is beside this file in the archive.</p><pre>${escapeText(text)}</pre></body></html>`
  );
}
