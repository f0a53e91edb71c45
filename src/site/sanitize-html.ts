import { html as htmlSpec, parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { schemeOf } from './view-urls.js';

type Node = DefaultTreeAdapterTypes.Node;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;
type ChildNode = DefaultTreeAdapterTypes.ChildNode;
type Element = DefaultTreeAdapterTypes.Element;
type Document = DefaultTreeAdapterTypes.Document;
type Attribute = Element['attrs'][number];

/**
 * Makes a parsed page inert: what is left can draw but never act. The choices follow DOMPurify's
 * and OWASP's: elements that run code, embed other documents or change where the page's URLs
 * point go with everything inside them; event handlers go; a URL-bearing attribute keeps only a
 * scheme that navigates or loads harmlessly, judged as the browser reads it (entities decoded by
 * the parser, tabs and newlines dropped, leading spaces and controls ignored, any case).
 */

/** Removed with their content, in any namespace (an SVG `<script>` runs like an HTML one). */
const DROPPED_ELEMENTS = new Set([
  'script',
  'noscript',
  'noembed',
  'noframes',
  'iframe',
  'frame',
  'frameset',
  'fencedframe',
  'object',
  'embed',
  'applet',
  'param',
  'portal',
  'base',
  // SMIL animation can set an attribute (an href) to a value no attribute held when it was checked.
  'animate',
  'set',
  'discard',
]);

/** Attributes that act whatever their value (a form's target, a ping on click, the old appcache). */
const DROPPED_ATTRIBUTES = new Set([
  'action',
  'formaction',
  'formmethod',
  'formtarget',
  'srcdoc',
  'ping',
  'manifest',
  'xml:base',
  'http-equiv',
  // Chromium's attribution reporting fetches these URLs in the background, unclicked.
  'attributionsrc',
  // The encoding a browser reads a linked stylesheet in: the copy-or-not decision reads every sheet
  // as the view's own encoding would have it (page-views.ts `stylesheetText`), so nothing may name another.
  'charset',
]);

/** Attributes whose value is a URL (or, for srcset, a list of them): DOMPurify's URI attributes and the HTML spec's. */
export const URL_ATTRIBUTES: ReadonlySet<string> = new Set([
  'href',
  'xlink:href',
  'src',
  'srcset',
  'imagesrcset',
  'poster',
  'background',
  'cite',
  'codebase',
  'data',
  'dynsrc',
  'lowsrc',
  'longdesc',
  'usemap',
  'icon',
  'classid',
  'archive',
  'profile',
  'itemtype',
  'to',
  'from',
  'values',
]);

/** Schemes a URL attribute may keep; a reference with no scheme is relative and always kept. */
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);

/**
 * Where a `data:` URL only ever draws: an image or media. Not a `<link>`: a `data:` stylesheet is
 * CSS no rewriting reads (its `@import` would load from anywhere).
 */
const DATA_DRAWS: Record<string, readonly string[]> = {
  img: ['src', 'srcset'],
  source: ['src', 'srcset'],
  input: ['src'],
  video: ['src', 'poster'],
  audio: ['src'],
  track: ['src'],
  image: ['href', 'xlink:href'],
  feimage: ['href', 'xlink:href'],
};

/** `<link>` relations a view keeps: the ones the rewriting points into the archive. Others prefetch or preconnect. */
const KEPT_RELS = new Set(['stylesheet', 'icon', 'shortcut', 'apple-touch-icon', 'alternate']);

function qualifiedName(attribute: Attribute): string {
  return (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name).toLowerCase();
}

/** Whether an attribute may stay on an element (tag in lower case) of a view. */
export function keepsAttribute(tag: string, attribute: Attribute): boolean {
  const name = qualifiedName(attribute);
  if (name.startsWith('on') || DROPPED_ATTRIBUTES.has(name)) return false;
  const scheme = schemeOf(attribute.value);
  // Whatever the attribute, a value that a browser could take for script is not kept.
  if (scheme === 'javascript' || scheme === 'vbscript' || /(?:^|[\s;,])(?:java|vb)script:/i.test(attribute.value))
    return false;
  if (!URL_ATTRIBUTES.has(name) || scheme === undefined) return true;
  if (scheme === 'data') return DATA_DRAWS[tag]?.includes(name) === true;
  return SAFE_SCHEMES.has(scheme);
}

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

/** Whether the sanitizer removes an element (with its content) from a view. */
export function dropsElement(element: Element): boolean {
  const tag = element.tagName.toLowerCase();
  if (DROPPED_ELEMENTS.has(tag)) return true;
  if (tag === 'meta') {
    // The view's own policy, charset and referrer policy are put first by `withViewHead`; the page's would fight them.
    return element.attrs.some(
      (a) =>
        a.name === 'http-equiv' || a.name === 'charset' || (a.name === 'name' && a.value.toLowerCase() === 'referrer'),
    );
  }
  if (tag === 'link') {
    const rel =
      element.attrs
        .find((a) => a.name === 'rel')
        ?.value.toLowerCase()
        .split(/[\t\n\f\r ]+/) ?? [];
    return rel.length === 0 || !rel.every((r) => r === '' || KEPT_RELS.has(r));
  }
  return false;
}

/** Removes, in place, everything of `parent`'s subtree that could act (template contents included). */
export function sanitizeTree(parent: ParentNode): void {
  const kept: ChildNode[] = [];
  for (const child of parent.childNodes) {
    // Comments hold nothing a view shows, and conditional or malformed ones are a classic way around a filter.
    if (child.nodeName === '#comment') continue;
    if (isElement(child)) {
      if (dropsElement(child)) continue;
      const tag = child.tagName.toLowerCase();
      child.attrs = child.attrs.filter((a) => keepsAttribute(tag, a));
      if (tag === 'form') {
        // A form with method "dialog" outside a dialog submits nowhere: not even to the view itself,
        // which from file:// would leave the reader on the error page of a blocked navigation.
        child.attrs = child.attrs.filter((a) => a.name !== 'method' && a.name !== 'target');
        child.attrs.push({ name: 'method', value: 'dialog' });
      }
      // A declarative shadow root is live content: its template is judged like the rest.
      const content = templateContent(child);
      if (content) sanitizeTree(content);
      if (tag === 'style') joinStyleText(child);
      sanitizeTree(child);
    }
    kept.push(child);
  }
  parent.childNodes = kept;
}

/**
 * The contents of an HTML `<template>`; undefined for any other element, a `<template>` in SVG or
 * MathML included (the parser gives those no separate contents).
 */
export function templateContent(element: Element): DefaultTreeAdapterTypes.DocumentFragment | undefined {
  return element.tagName === 'template' && 'content' in element
    ? (element as DefaultTreeAdapterTypes.Template).content
    : undefined;
}

/**
 * A `<style>`'s sheet is the text of its children joined (an SVG one may hold comments and
 * elements between pieces of it): it is made one text node, so what is cleaned is the sheet a
 * browser reads, not pieces that only join into a reference after the cleaning.
 */
function joinStyleText(style: Element): void {
  const text = style.childNodes
    .filter((node): node is DefaultTreeAdapterTypes.TextNode => node.nodeName === '#text')
    .map((node) => node.value)
    .join('');
  style.childNodes =
    text === '' ? [] : [{ nodeName: '#text', value: text, parentNode: style } as DefaultTreeAdapterTypes.TextNode];
}

/** The document's `<head>`: the parser makes one for any input, whatever the order of the source. */
export function headOf(document: Document): Element {
  const root = document.childNodes.find((n): n is Element => isElement(n) && n.tagName === 'html');
  const head = root?.childNodes.find((n): n is Element => isElement(n) && n.tagName === 'head');
  if (!head) throw new Error('internal: parse5 made a document without a head');
  return head;
}

function metaElement(parent: Element, attrs: Record<string, string>): Element {
  return {
    nodeName: 'meta',
    tagName: 'meta',
    attrs: Object.entries(attrs).map(([name, value]) => ({ name, value })),
    namespaceURI: htmlSpec.NS.HTML,
    parentNode: parent,
    childNodes: [],
  };
}

/** How many children `withViewHead` puts first in the head. */
export const VIEW_HEAD_LENGTH = 5;

/**
 * Puts the charset, the policy and the referrer policy first in the head, ahead of anything they
 * must govern. The DNS prefetch switch keeps a link to another host from being resolved unclicked.
 */
export function withViewHead(document: Document, policy: string): void {
  const head = headOf(document);
  // Put first again on every round of serializeSettled: the one from the last round goes.
  head.childNodes = head.childNodes.filter((node) => !isMarkStyle(node));
  head.childNodes.unshift(
    metaElement(head, { charset: 'utf-8' }),
    metaElement(head, { 'http-equiv': 'Content-Security-Policy', content: policy }),
    metaElement(head, { name: 'referrer', content: 'no-referrer' }),
    metaElement(head, { 'http-equiv': 'x-dns-prefetch-control', content: 'off' }),
    markStyle(head),
  );
}

/**
 * How a view marks the element a link names (`page.view.html#element3`, as search links to it):
 * by CSS alone, since no script runs in a view. First in the head, so the page's own rules can
 * outweigh it only with `!important`.
 */
export const MARK_STYLE = ':target{outline:3px solid #e5482d;outline-offset:2px}';

function markStyle(parent: Element): Element {
  const style: Element = {
    nodeName: 'style',
    tagName: 'style',
    attrs: [],
    namespaceURI: htmlSpec.NS.HTML,
    parentNode: parent,
    childNodes: [],
  };
  style.childNodes.push({
    nodeName: '#text',
    value: MARK_STYLE,
    parentNode: style,
  } as DefaultTreeAdapterTypes.TextNode);
  return style;
}

function isMarkStyle(node: ChildNode): boolean {
  if (!isElement(node) || node.tagName !== 'style' || node.attrs.length > 0 || node.childNodes.length !== 1)
    return false;
  const text = node.childNodes[0];
  return text?.nodeName === '#text' && (text as DefaultTreeAdapterTypes.TextNode).value === MARK_STYLE;
}

/** Rounds through parse and serialize a page may take before it is judged unstable (mutation XSS). */
const MAX_ROUNDS = 4;

/**
 * The serialized view of a sanitized document, checked the way a browser will read it: parsed
 * again and sanitized again, it must come out the same. Markup that changes meaning on a second
 * parse (the mutation XSS DOMPurify guards against) is sanitized again until it settles, in up to
 * `rounds` rounds; a page that never settles is replaced by a notice. A page view passes one: a
 * second round would sanitize what its references' rewriting never saw.
 */
export function serializeSettled(document: Document, policy: string, rounds = MAX_ROUNDS): string {
  let html = serialize(document);
  for (let round = 0; round < rounds; round++) {
    const again = parse(html);
    sanitizeTree(again);
    withViewHead(again, policy);
    const next = serialize(again);
    if (next === html) return html;
    html = next;
  }
  const notice = parse(
    '<!DOCTYPE html><title>Not shown</title><p>This page could not be made safe to view offline. The raw rendering is beside this file in the archive.</p>',
  );
  withViewHead(notice, policy);
  return serialize(notice);
}

/** Sanitizes `html` (a whole document) into an inert view under `policy`: for tests and generated pages. */
export function sanitizeDocument(html: string, policy: string): string {
  const document = parse(html);
  sanitizeTree(document);
  withViewHead(document, policy);
  return serializeSettled(document, policy);
}
