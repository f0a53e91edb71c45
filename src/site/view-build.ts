import { parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { decodePage } from './decode-page.js';
import { sanitizeTree, withViewHead } from './sanitize-html.js';
import {
  collectTreeReferences,
  referenceKey,
  rewriteTreeReferences,
  type FoundReference,
  type RewriteReference,
} from './tree-references.js';
import { textView } from './text-view.js';
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

/**
 * One page's view, built in the calling thread (tests, and the checks of what a view becomes):
 * parsed once, cleaned of everything that could act (sanitize-html.ts), its references rewritten,
 * the policy first in its head, and its final bytes checked (view-check.ts). A view failing its
 * check comes back as the plain text view that replaces it.
 */
export function pageView(html: string, rewrite: RewriteReference, viewPath: string): string {
  const resolve = (references: readonly FoundReference[]): (string | undefined)[] =>
    references.map(([kind, value]) => rewrite(value, kind));
  return buildViewHere(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8', viewPath, resolve).html;
}

/** The text of a parsed page (its title first), stylesheets left out. */
export function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterTypes.TextNode).value;
  if (!('childNodes' in node) || node.nodeName === 'style') return '';
  return node.childNodes.map((child) => `${textOf(child)} `).join('');
}
