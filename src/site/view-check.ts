import { parse, type DefaultTreeAdapterTypes } from 'parse5';
import { dropsElement, headOf, keepsAttribute, templateContent, VIEW_HEAD_LENGTH } from './sanitize-html.js';
import { attributeRole, collectTreeReferences, type FoundReference } from './tree-references.js';
import { INERT_URL } from './view-css.js';
import { staysInside } from './view-urls.js';

type Node = DefaultTreeAdapterTypes.Node;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;
type ChildNode = DefaultTreeAdapterTypes.ChildNode;
type Element = DefaultTreeAdapterTypes.Element;
type Document = DefaultTreeAdapterTypes.Document;

/**
 * The last step of a view: its final bytes read the way a browser reads them. Whatever rewrote the
 * tree after it was sanitized (references, CSS, the view's head) is judged here by its output, not
 * trusted: a CSS URL written back with a literal `</style>` in it, say, parses into elements nobody
 * sanitized. The serialized view is parsed again with the parser browsers follow, and it must be
 * the very tree that was intended, no element or attribute the sanitizer would remove, and every
 * reference one the rewriting produced and one that stays inside the archive.
 */

/** Why a view failed its check; a failed view is never written as it is. */
export type ViewFault =
  | { kind: 'changed'; where: string }
  | { kind: 'unsafe-element'; tag: string }
  | { kind: 'unsafe-attribute'; tag: string; attribute: string }
  | { kind: 'unexpected-reference'; value: string };

/**
 * Checks `html`, the serialization of `intended`, against it. `produced` holds every value the
 * rewriting wrote for a reference; `viewPath` is the view's entry name, against which relative
 * references must stay inside the archive. Undefined when the view holds.
 */
export function checkView(
  html: string,
  intended: Document,
  produced: ReadonlySet<string>,
  viewPath: string,
): ViewFault | undefined {
  const again = parse(html);
  return (
    sameTree(intended, again, 'document') ??
    unsafeMarkup(again, headOf(again)) ??
    unexpectedReference(collectTreeReferences(again), produced, viewPath)
  );
}

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

/** Children with runs of text joined: a removed element leaves two text nodes the parser reads as one. */
function childrenOf(parent: ParentNode): ChildNode[] {
  const out: ChildNode[] = [];
  for (const child of parent.childNodes) {
    const last = out.at(-1);
    if (child.nodeName === '#text' && last?.nodeName === '#text') {
      out[out.length - 1] = {
        ...(last as DefaultTreeAdapterTypes.TextNode),
        value: (last as DefaultTreeAdapterTypes.TextNode).value + (child as DefaultTreeAdapterTypes.TextNode).value,
      };
    } else out.push(child);
  }
  return out;
}

function sameTree(a: ParentNode, b: ParentNode, where: string): ViewFault | undefined {
  const left = childrenOf(a);
  const right = childrenOf(b);
  if (left.length !== right.length) return { kind: 'changed', where };
  for (let i = 0; i < left.length; i++) {
    const x = left[i] as ChildNode;
    const y = right[i] as ChildNode;
    const here = `${where}/${x.nodeName}[${i}]`;
    if (x.nodeName !== y.nodeName) return { kind: 'changed', where: here };
    if (x.nodeName === '#text' || x.nodeName === '#comment') {
      if ((x as { data?: string; value?: string }).value !== (y as { value?: string }).value)
        return { kind: 'changed', where: here };
      if ((x as { data?: string }).data !== (y as { data?: string }).data) return { kind: 'changed', where: here };
      continue;
    }
    if (x.nodeName === '#documentType') {
      // The serializer writes a doctype by its name alone (`<!DOCTYPE html>`): its identifiers go.
      if ((x as DefaultTreeAdapterTypes.DocumentType).name !== (y as DefaultTreeAdapterTypes.DocumentType).name)
        return { kind: 'changed', where: here };
      continue;
    }
    if (!isElement(x) || !isElement(y)) return { kind: 'changed', where: here };
    if (x.tagName !== y.tagName || x.namespaceURI !== y.namespaceURI || !sameAttributes(x, y))
      return { kind: 'changed', where: here };
    const [contentX, contentY] = [templateContent(x), templateContent(y)];
    if (contentX !== undefined || contentY !== undefined) {
      if (contentX === undefined || contentY === undefined) return { kind: 'changed', where: here };
      const fault = sameTree(contentX, contentY, `${here}/#content`);
      if (fault) return fault;
    }
    const fault = sameTree(x, y, here);
    if (fault) return fault;
  }
  return undefined;
}

function sameAttributes(x: Element, y: Element): boolean {
  if (x.attrs.length !== y.attrs.length) return false;
  return x.attrs.every((a, i) => {
    const b = y.attrs[i];
    return (
      b !== undefined &&
      a.name === b.name &&
      a.value === b.value &&
      (a.prefix ?? '') === (b.prefix ?? '') &&
      (a.namespace ?? '') === (b.namespace ?? '')
    );
  });
}

/**
 * The first element or attribute the sanitizer would not have let through, comments included; the
 * view's own head (charset, policy, referrer, the mark style) is what is put there on purpose.
 */
function unsafeMarkup(parent: ParentNode, head: Element): ViewFault | undefined {
  const children = parent.childNodes;
  for (let i = parent === head ? VIEW_HEAD_LENGTH : 0; i < children.length; i++) {
    const child = children[i] as ChildNode;
    if (child.nodeName === '#comment') return { kind: 'unsafe-element', tag: '#comment' };
    if (!isElement(child)) continue;
    const tag = child.tagName.toLowerCase();
    if (dropsElement(child)) return { kind: 'unsafe-element', tag };
    // An attribute kept only as a place in the page must still be one (the rewriting asks nothing of it).
    const attribute = child.attrs.find(
      (a) => !keepsAttribute(tag, a) || (attributeRole(child, a) === 'fragment' && !a.value.startsWith('#')),
    );
    if (attribute) return { kind: 'unsafe-attribute', tag, attribute: attribute.name };
    const content = templateContent(child);
    if (content) {
      const fault = unsafeMarkup(content, head);
      if (fault) return fault;
    }
    const fault = unsafeMarkup(child, head);
    if (fault) return fault;
  }
  return undefined;
}

function unexpectedReference(
  found: readonly FoundReference[],
  produced: ReadonlySet<string>,
  viewPath: string,
): ViewFault | undefined {
  for (const [kind, value] of found) {
    const known = produced.has(value) || value === INERT_URL || value.startsWith('#');
    if (!known || !staysInside(value, kind, viewPath)) return { kind: 'unexpected-reference', value };
  }
  return undefined;
}
