import type { DefaultTreeAdapterTypes } from 'parse5';
import type { HtmlRefKind } from './requisites/html-refs.js';
import { urlAsRead } from './requisites/resolve-ref.js';
import { templateContent, URL_ATTRIBUTES } from './sanitize-html.js';
import { cleanInlineCss } from './view-css.js';

type ParentNode = DefaultTreeAdapterTypes.ParentNode;
type Element = DefaultTreeAdapterTypes.Element;
type Attribute = Element['attrs'][number];

/**
 * What a reference becomes in a view: the new value, or undefined to make it inert (the attribute
 * dropped, a CSS reference emptied). Values are text as the parser decoded it (entities resolved,
 * UTF-8 as JavaScript strings).
 */
export type RewriteReference = (value: string, kind: HtmlRefKind) => string | undefined;

/** Attributes holding one URL of a resource, by element (lower case), as the crawl's scanner reads them. */
const RESOURCE_ATTRIBUTES: Record<string, readonly string[]> = {
  img: ['src'],
  input: ['src'],
  source: ['src'],
  video: ['src', 'poster'],
  audio: ['src'],
  track: ['src'],
  image: ['href', 'xlink:href'],
  feimage: ['href', 'xlink:href'],
};

const SRCSET_ELEMENTS = new Set(['img', 'source']);

/** SVG presentation attributes a browser parses as CSS values that may hold a `url(...)`. */
const CSS_ATTRIBUTES = new Set([
  'style',
  'fill',
  'stroke',
  'filter',
  'mask',
  'clip-path',
  'marker',
  'marker-start',
  'marker-mid',
  'marker-end',
  'cursor',
]);

function nameOf(attribute: Attribute): string {
  return (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name).toLowerCase();
}

function isElement(node: DefaultTreeAdapterTypes.Node): node is Element {
  return 'tagName' in node;
}

/**
 * Rewrites, in place, every reference of the tree under `parent`: resource attributes, `srcset`
 * candidates, stylesheet and icon links, hyperlinks, CSS in `style` attributes, SVG presentation
 * attributes and `<style>` elements. Whatever `rewrite` declines is made inert, and any other
 * URL-bearing attribute (an SVG `<use>`'s href, a `cite`) keeps only a reference inside the page.
 */
export function rewriteTreeReferences(parent: ParentNode, rewrite: RewriteReference): void {
  visitTree(parent, rewrite, true);
}

/** A reference as `rewrite` is asked about it: its kind and its value as the parser decoded it. */
export type FoundReference = readonly [kind: HtmlRefKind, value: string];

/**
 * Every reference `rewriteTreeReferences` would ask about, in the order it would ask, the tree left
 * as it is: what a view's builder resolves before it rewrites (page-views.ts), so the rewriting can
 * run where the archive's catalog is not (a worker thread). Each distinct reference once.
 */
export function collectTreeReferences(parent: ParentNode): FoundReference[] {
  const found = new Map<string, FoundReference>();
  visitTree(
    parent,
    (value, kind) => {
      found.set(referenceKey(kind, value), [kind, value]);
      return value;
    },
    false,
  );
  return [...found.values()];
}

/** One key for a reference of a kind: the lookup `rewriteTreeReferences` makes in what was resolved. */
export function referenceKey(kind: HtmlRefKind, value: string): string {
  return `${kind}\n${value}`;
}

function visitTree(parent: ParentNode, rewrite: RewriteReference, apply: boolean): void {
  for (const child of parent.childNodes) {
    if (!isElement(child)) continue;
    rewriteElement(child, rewrite, apply);
    const content = templateContent(child);
    if (content) visitTree(content, rewrite, apply);
    visitTree(child, rewrite, apply);
  }
}

/**
 * What the rewriting does with an attribute of an element: reads it as CSS, as a `srcset`, as one
 * reference of a kind, keeps it only as a place in the page (`fragment`), or leaves it (undefined).
 * The one rule for both the rewriting and the final check of a view (view-check.ts).
 */
export type AttributeRole = 'css' | 'srcset' | 'fragment' | HtmlRefKind;

export function attributeRole(element: Element, attribute: Attribute): AttributeRole | undefined {
  const tag = element.tagName.toLowerCase();
  const name = nameOf(attribute);
  if (CSS_ATTRIBUTES.has(name)) return 'css';
  if (name === 'srcset' && SRCSET_ELEMENTS.has(tag)) return 'srcset';
  if (!URL_ATTRIBUTES.has(name)) return undefined;
  if (RESOURCE_ATTRIBUTES[tag]?.includes(name) || name === 'background') return 'resource';
  if ((tag === 'a' || tag === 'area') && (name === 'href' || name === 'xlink:href')) return 'link';
  if (tag === 'link' && name === 'href') return linkKind(element) ?? 'fragment';
  return 'fragment';
}

function rewriteElement(element: Element, rewrite: RewriteReference, apply: boolean): void {
  const tag = element.tagName.toLowerCase();
  const kept: Attribute[] = [];
  for (const attribute of element.attrs) {
    const role = attributeRole(element, attribute);
    let value: string | undefined = attribute.value;
    if (role === 'css') value = cleanInlineCss(value, rewrite);
    else if (role === 'srcset') value = rewriteSrcset(value, rewrite) || undefined;
    else if (role === 'fragment') value = fragmentOnly(value);
    else if (role !== undefined) value = rewrite(value, role);
    if (value !== undefined) kept.push({ ...attribute, value });
  }
  if (apply) element.attrs = kept;
  if (tag === 'style')
    for (const text of element.childNodes)
      if ('value' in text && text.nodeName === '#text') {
        const cleaned = cleanInlineCss(text.value, rewrite);
        if (apply) text.value = cleaned;
      }
}

/** A reference to a place in the page itself (`#id`), as the browser reads it; undefined for anything else. */
function fragmentOnly(value: string): string | undefined {
  const bare = urlAsRead(value);
  return bare.startsWith('#') ? bare : undefined;
}

function linkKind(element: Element): HtmlRefKind | undefined {
  const rel = (element.attrs.find((a) => a.name === 'rel')?.value ?? '').toLowerCase().split(/[\t\n\f\r ]+/);
  if (rel.includes('stylesheet')) return 'stylesheet';
  if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon')) return 'resource';
  return undefined;
}

const SPACE = /[\t\n\f\r ]/;

/**
 * `a.png 1x, b.png 2x` with each candidate's URL rewritten (or dropped) and its descriptor kept, split as the
 * HTML srcset algorithm splits it: a URL runs to the next space, commas at its end separate.
 */
export function rewriteSrcset(srcset: string, rewrite: RewriteReference): string {
  const candidates: string[] = [];
  let i = 0;
  while (i < srcset.length) {
    while (i < srcset.length && (SPACE.test(srcset[i] as string) || srcset[i] === ',')) i++;
    if (i >= srcset.length) break;
    const start = i;
    while (i < srcset.length && !SPACE.test(srcset[i] as string)) i++;
    let end = i;
    const endsCandidate = srcset[end - 1] === ',';
    while (end > start && srcset[end - 1] === ',') end--;
    const url = srcset.slice(start, end);
    let descriptor = '';
    if (!endsCandidate) {
      const from = i;
      // The algorithm knows one level of parentheses: a `(` inside one does not nest, and the
      // first `)` ends it (a comma after it ends the candidate, as it does for a browser).
      let inParens = false;
      while (i < srcset.length && (srcset[i] !== ',' || inParens)) {
        if (srcset[i] === '(') inParens = true;
        else if (srcset[i] === ')') inParens = false;
        i++;
      }
      descriptor = srcset.slice(from, i).trim();
    }
    if (url === '') continue;
    const value = rewrite(url, 'resource');
    // A candidate that would load from outside the archive goes; the others still choose by descriptor.
    if (value === undefined) continue;
    candidates.push(descriptor === '' ? value : `${value} ${descriptor}`);
  }
  return candidates.join(', ');
}
