import { parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { escapeText } from '../core/xml-escape.js';
import { decodePage } from './decode-page.js';
import { sanitizeTree, withViewHead } from './sanitize-html.js';
import { collectTreeReferences, referenceKey, rewriteTreeReferences, type FoundReference } from './tree-references.js';
import { checkView, type ViewFault } from './view-check.js';
import { VIEW_CSP } from './view-policy.js';

type Document = DefaultTreeAdapterTypes.Document;
type Node = DefaultTreeAdapterTypes.Node;

/**
 * One page's view in two steps around the one thing they cannot do themselves: deciding what each
 * reference becomes, which needs the run's catalog of archived files. `prepareView` parses the
 * rendering once and sanitizes it, and lists its references; the caller resolves them; `finishView`
 * rewrites, serializes and checks the final bytes (view-check.ts). Both steps are pure and run in
 * a worker thread (view-worker.ts) or, where none can be started, in the caller's.
 */
export interface PreparedView {
  document: Document;
  references: FoundReference[];
}

export function prepareView(body: Uint8Array, contentType: string | null): PreparedView {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const document = parse(decodePage(bytes, contentType));
  sanitizeTree(document);
  return { document, references: collectTreeReferences(document) };
}

export interface FinishedView {
  /** The view as written: UTF-8 with a byte order mark, which outranks anything in the file. */
  html: string;
  /** Set when the view failed its check: `html` is then the plain text view that replaces it. */
  fault?: ViewFault;
}

/**
 * The view of a prepared page, given what each of its references became (`resolved[i]` for
 * `references[i]`; undefined makes it inert), and the view's entry name.
 */
export function finishView(
  prepared: PreparedView,
  resolved: readonly (string | undefined)[],
  viewPath: string,
): FinishedView {
  const { document, references } = prepared;
  const table = new Map<string, string | undefined>();
  const produced = new Set<string>();
  references.forEach(([kind, value], i) => {
    const result = resolved[i];
    table.set(referenceKey(kind, value), result);
    if (result !== undefined) produced.add(result);
  });
  // A reference the listing did not see is made inert: the two walks are one code path, so none is.
  rewriteTreeReferences(document, (value, kind) => table.get(referenceKey(kind, value)));
  withViewHead(document, VIEW_CSP);
  const html = serialize(document);
  const fault = checkView(html, document, produced, viewPath);
  return fault === undefined ? { html: `\ufeff${html}` } : { html: textView(textOf(document)), fault };
}

/** Both steps in the calling thread, `resolve` in between: what a worker thread and its caller do together. */
export function buildViewHere(
  body: Uint8Array,
  contentType: string | null,
  viewPath: string,
  resolve: (references: readonly FoundReference[]) => (string | undefined)[],
): FinishedView {
  const prepared = prepareView(body, contentType);
  return finishView(prepared, resolve(prepared.references), viewPath);
}

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

/** The text of a parsed page (its title first), stylesheets left out. */
export function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterTypes.TextNode).value;
  if (!('childNodes' in node) || node.nodeName === 'style') return '';
  return node.childNodes.map((child) => `${textOf(child)} `).join('');
}
