import { posix } from 'node:path';
import { parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';

/**
 * An independent judge of an offline view: none of the project's sanitizer, rewriting or CSS
 * code, only parse5 (the HTML parser a browser uses), the WHATWG URL parser and a CSS tokenizer
 * written here from CSS Syntax Level 3. It reads the view as a browser would from file://, at
 * `viewUrl` inside an extraction rooted at `root`, and lists what the policy does not allow:
 * elements that run or embed, handlers, meta refreshes, references that leave the extraction or
 * reach a raw rendering, a `<style>` that holds its own end tag, a tree that changes on a re-parse.
 */

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

export interface ViewPlace {
  /** `file:///x/extraction/` */
  root: string;
  /** The view's own URL, inside `root`. */
  viewUrl: string;
}

/** In any namespace: what runs script, embeds a document, moves the base URL, or sets an attribute later. */
const FORBIDDEN_ELEMENTS = new Set([
  'script',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'param',
  'base',
  'portal',
  'fencedframe',
  'noscript',
  'animate',
  'set',
]);

/** Attributes that act whatever their value. */
const FORBIDDEN_ATTRIBUTES = new Set(['srcdoc', 'ping', 'attributionsrc', 'manifest', 'xml:base', 'http-equiv']);

/** Attributes whose value a browser reads as a URL (srcset and imagesrcset as a list of them). */
const URL_ATTRIBUTES = new Set([
  'href',
  'xlink:href',
  'src',
  'srcset',
  'imagesrcset',
  'poster',
  'action',
  'formaction',
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
  'to',
  'from',
  'values',
]);

/** SVG attributes a browser reads as CSS values, which may hold a url(). */
const CSS_VALUE_ATTRIBUTES = new Set([
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

/** `<link>` relations that load nothing but a stylesheet or an icon the view keeps. */
const LINK_RELATIONS = new Set(['stylesheet', 'icon', 'shortcut', 'apple-touch-icon', 'alternate']);

/** The view's own `<meta http-equiv>`s: its policy and the DNS prefetch switch. */
const VIEW_HTTP_EQUIV = new Set(['content-security-policy', 'x-dns-prefetch-control']);

/** What a reference is for: a link is followed by a click, a resource drawn, a stylesheet applied. */
export type ReferenceKind = 'link' | 'resource' | 'stylesheet';

/** `data:` URLs that only draw: an image or a font. `data:,` is the empty inert one. */
const DRAWN_DATA = /^data:(?:image\/|font\/|application\/(?:x-)?font|,)/i;

/** Why a reference is not allowed, or undefined when it is. */
export function judgeReference(raw: string, kind: ReferenceKind, place: ViewPlace): string | undefined {
  // As the URL parser reads it: C0 controls and spaces trimmed, tabs and newlines dropped.
  // eslint-disable-next-line no-control-regex
  const value = raw.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  if (value === '' || value.startsWith('#')) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (kind === 'link' && ['http', 'https', 'mailto', 'tel'].includes(scheme)) return undefined;
    if (kind === 'resource' && scheme === 'data' && DRAWN_DATA.test(value)) return undefined;
    // The empty data: URL loads an empty sheet: how a view makes an @import inert.
    if (kind === 'stylesheet' && value === 'data:,') return undefined;
    return `${kind} with scheme ${scheme}:`;
  }
  if (value.startsWith('/') || value.startsWith('\\')) return `${kind} from the root or another host`;
  let url: URL;
  try {
    url = new URL(value, place.viewUrl);
  } catch {
    return undefined;
  }
  if (url.host !== '') return `${kind} to file://${url.host}`;
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // Left as it is: a browser cannot decode it either.
  }
  const rootPath = new URL(place.root).pathname;
  if (!posix.normalize(path).startsWith(rootPath)) return `${kind} outside the extraction`;
  if (kind === 'link' && !path.endsWith('.view.html')) return 'link to a file that is not a view';
  if (kind === 'stylesheet' && !path.endsWith('.css')) return 'stylesheet that is not a .css file';
  return undefined;
}

const isElement = (node: Node): node is Element => 'tagName' in node;

function qualifiedName(attribute: Element['attrs'][number]): string {
  return (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name).toLowerCase();
}

/** Every element, template contents included (a declarative shadow root is live), in document order. */
function elementsOf(node: Node): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    if (isElement(n)) out.push(n);
    // Only an HTML template has contents apart from its children; an SVG or MathML one does not.
    const content =
      isElement(n) && n.tagName === 'template' ? (n as DefaultTreeAdapterTypes.Template).content : undefined;
    if (content !== undefined) walk(content);
    if ('childNodes' in n) for (const child of n.childNodes) walk(child);
  };
  walk(node);
  return out;
}

/** The URLs of a srcset, split as the HTML spec's algorithm splits it. */
export function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  let i = 0;
  const space = (c: string | undefined): boolean => c !== undefined && /[\t\n\f\r ]/.test(c);
  while (i < srcset.length) {
    while (i < srcset.length && (space(srcset[i]) || srcset[i] === ',')) i++;
    if (i >= srcset.length) break;
    const start = i;
    while (i < srcset.length && !space(srcset[i])) i++;
    let url = srcset.slice(start, i);
    if (url.endsWith(',')) url = url.replace(/,+$/, '');
    else {
      let depth = 0;
      while (i < srcset.length && (srcset[i] !== ',' || depth > 0)) {
        if (srcset[i] === '(') depth++;
        else if (srcset[i] === ')') depth = Math.max(0, depth - 1);
        i++;
      }
    }
    if (url !== '') urls.push(url);
  }
  return urls;
}

function textOf(element: Element): string {
  return element.childNodes.map((n) => ('value' in n && n.nodeName === '#text' ? n.value : '')).join('');
}

/** What the policy does not allow in `view` (a whole document, a byte order mark first or not). */
export function viewViolations(view: string, place: ViewPlace): string[] {
  const html = view.replace(/^\ufeff/, '');
  const found: string[] = [];
  const document = parse(html);
  for (const element of elementsOf(document)) {
    const tag = element.tagName.toLowerCase();
    const where = `<${tag}>`;
    if (FORBIDDEN_ELEMENTS.has(tag)) found.push(`element ${where}`);
    const rel = (element.attrs.find((a) => a.name === 'rel')?.value ?? '').toLowerCase().split(/[\t\n\f\r ]+/);
    if (tag === 'link' && !rel.every((r) => r === '' || LINK_RELATIONS.has(r)))
      found.push(`<link rel=${rel.join(' ')}>`);
    for (const attribute of element.attrs) {
      const name = qualifiedName(attribute);
      const value = attribute.value;
      if (name.startsWith('on')) found.push(`handler ${name} on ${where}`);
      else if (name === 'http-equiv') {
        if (tag !== 'meta' || !VIEW_HTTP_EQUIV.has(value.toLowerCase())) found.push(`http-equiv=${value} on ${where}`);
      } else if (FORBIDDEN_ATTRIBUTES.has(name)) found.push(`attribute ${name} on ${where}`);
      else if (name === 'style' || (CSS_VALUE_ATTRIBUTES.has(name) && element.namespaceURI.endsWith('/svg')))
        for (const ref of cssReferences(value)) {
          const why = judgeReference(ref.url, ref.kind, place);
          if (why !== undefined) found.push(`${why} in ${name} of ${where}: ${JSON.stringify(ref.url)}`);
        }
      else if (URL_ATTRIBUTES.has(name)) {
        const kind: ReferenceKind =
          ((tag === 'a' || tag === 'area') && (name === 'href' || name === 'xlink:href')) ||
          name === 'action' ||
          name === 'formaction'
            ? 'link'
            : tag === 'link' && name === 'href' && rel.includes('stylesheet')
              ? 'stylesheet'
              : 'resource';
        const urls = name === 'srcset' || name === 'imagesrcset' ? srcsetUrls(value) : [value];
        for (const url of urls) {
          const why = judgeReference(url, kind, place);
          if (why !== undefined) found.push(`${why} in ${name} of ${where}: ${JSON.stringify(url)}`);
        }
      }
    }
    // A stylesheet only in HTML and SVG: MathML has no style element of its own.
    if (tag === 'style' && !element.namespaceURI.endsWith('/MathML')) {
      const text = textOf(element);
      // An end tag as the tokenizer reads one in raw text: the name, then a space, a slash or `>`.
      // (`\</style\>` in CSS is text: the backslash ends no tag name.)
      if (element.namespaceURI.endsWith('/xhtml') && /<\/style[\t\n\f\r />]/i.test(text))
        found.push('</style inside a <style>');
      for (const ref of cssReferences(text)) {
        const why = judgeReference(ref.url, ref.kind, place);
        if (why !== undefined) found.push(`${why} in ${where}: ${JSON.stringify(ref.url)}`);
      }
    }
  }
  const once = serialize(document);
  if (serialize(parse(once)) !== once) found.push('the tree changes when parsed again');
  return found;
}

// ---- CSS: the tokenizer of CSS Syntax Level 3 (consume a token), and where a browser takes URLs from.

type Token =
  | { type: 'string' | 'url' | 'function' | 'at' | 'ident'; value: string }
  | { type: 'bad' | 'space' }
  | { type: 'char'; value: string };

const HEX = /[0-9a-fA-F]/;
const isNameStart = (c: string | undefined): boolean => c !== undefined && (/[A-Za-z_]/.test(c) || c >= '\u0080');
const isName = (c: string | undefined): boolean => isNameStart(c) || (c !== undefined && /[0-9-]/.test(c));
const isWhite = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n';
const validEscape = (a: string | undefined, b: string | undefined): boolean =>
  a === '\\' && b !== '\n' && b !== undefined;

/** Tokens of `input` as a browser reads them (escapes decoded in names, strings and URLs). */
export function cssTokens(input: string): Token[] {
  const css = input.replace(/\r\n?|\f/g, '\n').replace(/\0/g, '\ufffd');
  const tokens: Token[] = [];
  let i = 0;
  const escape = (): string => {
    // At the character after the backslash.
    let hex = '';
    while (hex.length < 6 && HEX.test(css[i] ?? '')) hex += css[i++];
    if (hex === '') return i < css.length ? (css[i++] as string) : '\ufffd';
    if (isWhite(css[i])) i++;
    const code = parseInt(hex, 16);
    return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? '\ufffd' : String.fromCodePoint(code);
  };
  const startsIdent = (at: number): boolean => {
    const [a, b, c] = [css[at], css[at + 1], css[at + 2]];
    if (a === '-') return isNameStart(b) || b === '-' || validEscape(b, c);
    return isNameStart(a) || validEscape(a, b);
  };
  const name = (): string => {
    let out = '';
    for (;;) {
      if (isName(css[i])) out += css[i++];
      else if (validEscape(css[i], css[i + 1])) {
        i++;
        out += escape();
      } else return out;
    }
  };
  while (i < css.length) {
    const c = css[i] as string;
    if (c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2);
      i = end < 0 ? css.length : end + 2;
    } else if (isWhite(c)) {
      while (isWhite(css[i])) i++;
      tokens.push({ type: 'space' });
    } else if (c === '"' || c === "'") {
      i++;
      let value = '';
      let bad = false;
      while (i < css.length && css[i] !== c) {
        if (css[i] === '\n') {
          bad = true;
          break;
        }
        if (css[i] === '\\') {
          i++;
          if (css[i] === '\n') i++;
          else if (i < css.length) value += escape();
        } else value += css[i++];
      }
      if (!bad) i++;
      tokens.push(bad ? { type: 'bad' } : { type: 'string', value });
    } else if (c === '@' && startsIdent(i + 1)) {
      i++;
      tokens.push({ type: 'at', value: name() });
    } else if (startsIdent(i) || (c === '\\' && validEscape(c, css[i + 1]))) {
      const ident = name();
      if (css[i] === '(') {
        i++;
        if (ident.toLowerCase() === 'url') {
          while (isWhite(css[i]) && isWhite(css[i + 1])) i++;
          const after = isWhite(css[i]) ? css[i + 1] : css[i];
          if (after !== '"' && after !== "'") {
            tokens.push(unquotedUrl());
            continue;
          }
        }
        tokens.push({ type: 'function', value: ident });
      } else tokens.push({ type: 'ident', value: ident });
    } else {
      tokens.push({ type: 'char', value: c });
      i++;
    }
  }
  return tokens;

  function unquotedUrl(): Token {
    while (isWhite(css[i])) i++;
    let value = '';
    while (i < css.length) {
      const ch = css[i] as string;
      if (ch === ')') {
        i++;
        return { type: 'url', value };
      }
      if (isWhite(ch)) {
        while (isWhite(css[i])) i++;
        if (css[i] === ')' || i >= css.length) continue;
        return badUrl();
      }
      // eslint-disable-next-line no-control-regex
      if (ch === '"' || ch === "'" || ch === '(' || /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(ch))
        return badUrl();
      if (ch === '\\') {
        if (!validEscape(ch, css[i + 1])) return badUrl();
        i++;
        value += escape();
      } else {
        value += ch;
        i++;
      }
    }
    return { type: 'url', value };
  }

  function badUrl(): Token {
    while (i < css.length && css[i] !== ')') i += validEscape(css[i], css[i + 1]) ? 2 : 1;
    i++;
    return { type: 'bad' };
  }
}

/** Functions whose strings are text, never a URL. */
const TEXT_FUNCTIONS = new Set([
  'local',
  'format',
  'tech',
  'counter',
  'counters',
  'symbols',
  'attr',
  'env',
  'lang',
  'selector',
  'supports',
  'leader',
  'string',
  'content',
  'target-counter',
  'target-counters',
  'target-text',
]);

/**
 * Every URL a browser may load from `css` (a sheet or a declaration list): url() however written,
 * the strings of an `@import` prelude, strings inside any function not known to take text
 * (image-set() and the like), and the strings of a custom property (var() can move them into one).
 */
export function cssReferences(css: string): { url: string; kind: ReferenceKind }[] {
  const found: { url: string; kind: ReferenceKind }[] = [];
  /** Open blocks: a function's name in lower case, or '(' '[' '{'. */
  const open: string[] = [];
  let inImport = false;
  let customAt = -1;
  const tokens = cssTokens(css);
  const kind = (): ReferenceKind => (inImport ? 'stylesheet' : 'resource');
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t] as Token;
    const inFunction = open.some((name) => !'([{'.includes(name) && !TEXT_FUNCTIONS.has(name));
    if (token.type === 'url') found.push({ url: token.value, kind: kind() });
    else if (token.type === 'string') {
      if ((inImport && open.every((o) => o === '{')) || inFunction || customAt >= 0)
        found.push({ url: token.value, kind: kind() });
    } else if (token.type === 'function') {
      const fn = token.value.toLowerCase();
      open.push(fn);
    } else if (token.type === 'at') {
      if (token.value.toLowerCase() === 'import') inImport = true;
    } else if (token.type === 'ident') {
      let next = t + 1;
      while (tokens[next]?.type === 'space') next++;
      const colon = tokens[next];
      if (token.value.startsWith('--') && colon?.type === 'char' && colon.value === ':' && customAt < 0)
        customAt = open.length;
    } else if (token.type === 'char') {
      const c = token.value;
      if (c === '(' || c === '[' || c === '{') open.push(c);
      else if (c === ')' || c === ']' || c === '}') {
        const want = c === ')' ? '(' : c === ']' ? '[' : '{';
        const top = open.at(-1);
        if (top === want || (c === ')' && top !== undefined && !'([{'.includes(top))) open.pop();
        if (c === '}' && open.length <= customAt) customAt = -1;
        if (c === '}') inImport = false;
      }
      if (c === ';' && open.length === customAt) customAt = -1;
      if ((c === ';' || c === '{') && open.filter((o) => o !== '{').length === 0) inImport = false;
    }
  }
  return found;
}
