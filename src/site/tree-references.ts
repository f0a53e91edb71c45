import type { DefaultTreeAdapterTypes } from 'parse5';
import { scanCss } from '../crawl/requisites/css-refs.js';
import type { HtmlRefKind } from '../crawl/requisites/html-refs.js';
import { applyReplacements } from '../crawl/requisites/rewrite.js';

type ParentNode = DefaultTreeAdapterTypes.ParentNode;
type Element = DefaultTreeAdapterTypes.Element;
type Attribute = Element['attrs'][number];

/**
 * What a reference becomes in a view: the new value, or undefined to leave it as written. Values
 * are text as the parser decoded it (entities resolved, UTF-8 as JavaScript strings).
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
};

const SRCSET_ELEMENTS = new Set(['img', 'source']);

function nameOf(attribute: Attribute): string {
  return (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name).toLowerCase();
}

function isElement(node: DefaultTreeAdapterTypes.Node): node is Element {
  return 'tagName' in node;
}

/**
 * Rewrites, in place, every reference of the tree under `parent` that the page draws with or links
 * by: resource attributes, `srcset` candidates, stylesheet and icon links, hyperlinks, `style`
 * attributes and `<style>` elements (their `url(...)` and `@import`).
 */
export function rewriteTreeReferences(parent: ParentNode, rewrite: RewriteReference): void {
  for (const child of parent.childNodes) {
    if (!isElement(child)) continue;
    rewriteElement(child, rewrite);
    if (child.tagName === 'template')
      rewriteTreeReferences((child as DefaultTreeAdapterTypes.Template).content, rewrite);
    rewriteTreeReferences(child, rewrite);
  }
}

function rewriteElement(element: Element, rewrite: RewriteReference): void {
  const tag = element.tagName.toLowerCase();
  const kindOf = (name: string): HtmlRefKind | undefined => {
    if (RESOURCE_ATTRIBUTES[tag]?.includes(name) || name === 'background') return 'resource';
    if ((tag === 'a' || tag === 'area') && (name === 'href' || name === 'xlink:href')) return 'link';
    if (tag === 'link' && name === 'href') return linkKind(element);
    return undefined;
  };
  for (const attribute of element.attrs) {
    const name = nameOf(attribute);
    const kind = kindOf(name);
    if (kind !== undefined) attribute.value = rewrite(attribute.value, kind) ?? attribute.value;
    else if (name === 'srcset' && SRCSET_ELEMENTS.has(tag)) attribute.value = rewriteSrcset(attribute.value, rewrite);
    else if (name === 'style') attribute.value = rewriteCss(attribute.value, rewrite);
  }
  if (tag === 'style')
    for (const text of element.childNodes)
      if ('value' in text && text.nodeName === '#text') text.value = rewriteCss(text.value, rewrite);
}

function linkKind(element: Element): HtmlRefKind | undefined {
  const rel = (element.attrs.find((a) => a.name === 'rel')?.value ?? '').toLowerCase().split(/[\t\n\f\r ]+/);
  if (rel.includes('stylesheet')) return 'stylesheet';
  if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon')) return 'resource';
  return undefined;
}

/** CSS text with its references rewritten; scanned through a latin1 view, as the crawl scans it. */
export function rewriteCss(css: string, rewrite: RewriteReference): string {
  const latin1 = Buffer.from(css, 'utf8').toString('latin1');
  const replacements = [];
  for (const ref of scanCss(latin1)) {
    const text = rewrite(ref.value, ref.kind === 'import' ? 'stylesheet' : 'resource');
    if (text !== undefined) replacements.push({ start: ref.start, end: ref.end, text });
  }
  if (replacements.length === 0) return css;
  return Buffer.from(applyReplacements(latin1, replacements), 'latin1').toString('utf8');
}

const SPACE = /[\t\n\f\r ]/;

/**
 * `a.png 1x, b.png 2x` with each candidate's URL rewritten and its descriptor kept, split as the
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
      let depth = 0;
      while (i < srcset.length && (srcset[i] !== ',' || depth > 0)) {
        if (srcset[i] === '(') depth++;
        else if (srcset[i] === ')') depth = Math.max(0, depth - 1);
        i++;
      }
      descriptor = srcset.slice(from, i).trim();
    }
    if (url === '') continue;
    const value = rewrite(url, 'resource') ?? url;
    candidates.push(descriptor === '' ? value : `${value} ${descriptor}`);
  }
  return candidates.join(', ');
}
