import { scanCss } from './css-refs.js';

/**
 * References in (X)HTML markup that a browser follows to draw the page, plus links to other pages.
 * A small tag scanner rather than a DOM parser: it reports byte offsets of each attribute value so
 * a rewrite can splice new values in and leave every other byte of the document alone. It works on
 * a latin1 view of the bytes (see css-refs.ts for why).
 */
export type HtmlRefKind =
  /** A stylesheet: fetched, and scanned for references of its own. */
  | 'stylesheet'
  /** An image, icon or other resource the page draws with. */
  | 'resource'
  /** A hyperlink: never fetched; rewritten only when it points at another archived page. */
  | 'link';

export interface HtmlRef {
  start: number;
  end: number;
  /** The value with character references decoded, as UTF-8 text. */
  value: string;
  kind: HtmlRefKind;
}

/** Attributes holding one URL of a resource, by element (lower case). */
const RESOURCE_ATTRIBUTES: Record<string, readonly string[]> = {
  img: ['src'],
  input: ['src'],
  embed: ['src'],
  source: ['src'],
  video: ['src', 'poster'],
  audio: ['src'],
  image: ['href', 'xlink:href'],
};

const SRCSET_ELEMENTS = new Set(['img', 'source']);

export function scanHtml(html: string): HtmlRef[] {
  const refs: HtmlRef[] = [];
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open < 0) break;
    if (html.startsWith('<!--', open)) i = skipPast(html, open + 4, '-->');
    else if (html.startsWith('<![CDATA[', open)) i = skipPast(html, open + 9, ']]>');
    else if (html[open + 1] === '!' || html[open + 1] === '?' || html[open + 1] === '/')
      i = skipPast(html, open + 2, '>');
    else if (/[A-Za-z]/.test(html[open + 1] ?? '')) i = scanTag(html, open, refs);
    else i = open + 1;
  }
  return refs;
}

export interface Attribute {
  name: string;
  start: number;
  end: number;
  raw: string;
}

/** Attribute names `collect` reads; others are skipped without making a string of their name. */
const READ_ATTRIBUTES = new Set(['src', 'poster', 'href', 'xlink:href', 'rel', 'background', 'srcset', 'style']);
const LONGEST_READ = 10;

const TAB = 9;
const LF = 10;
const FF = 12;
const CR = 13;
const SPACE = 32;
const DQUOTE = 34;
const SQUOTE = 39;
const SLASH = 47;
const EQUALS = 61;
const GT = 62;

/** HTML whitespace only: `\s` would also match 0xA0, a UTF-8 continuation byte in latin1 text. */
function isHtmlSpace(code: number): boolean {
  return code === SPACE || code === TAB || code === LF || code === CR || code === FF;
}

/** A character that may be part of an attribute name: not space, quote, `>`, `/` or `=`. */
function isNameCode(code: number): boolean {
  return !isHtmlSpace(code) && code !== DQUOTE && code !== SQUOTE && code !== GT && code !== SLASH && code !== EQUALS;
}

/**
 * Reads one start tag, records its references, and skips a script or style body. Attributes are
 * read by hand, one pass over the characters: a page has an element per widget, each with a style
 * attribute, and a regular expression match per attribute was most of what scanning pages cost.
 * The grammar is the tokenizer's, simplified: after optional space, a name (`[^space"'>/=]+`)
 * with an optional `= value` (double-quoted, single-quoted, or up to space or `>`; a quote never
 * closed starts an unquoted value), or `>` or `/>` ending the tag, or any other single character,
 * which is skipped.
 */
function scanTag(html: string, open: number, refs: HtmlRef[]): number {
  const { element, attributes, end, selfClosing } = readStartTag(html, open);
  collect(element, attributes, refs);
  if (!selfClosing && (element === 'script' || element === 'style')) {
    const close = new RegExp(`</${element}`, 'ig');
    close.lastIndex = end;
    const found = close.exec(html);
    const bodyEnd = found ? found.index : html.length;
    if (element === 'style') refs.push(...scanCss(html.slice(end, bodyEnd), end).map(cssRef));
    return bodyEnd;
  }
  return end;
}

/**
 * The start tag at `open` (a `<` followed by a letter): its element name in lower case, the
 * attributes `collect` reads (first occurrence first, names in lower case, value offsets), and
 * where the tag ends. Exported for tests.
 */
export function readStartTag(
  html: string,
  open: number,
): { element: string; attributes: Attribute[]; end: number; selfClosing: boolean } {
  const length = html.length;
  const nameLimit = Math.min(length, open + 64);
  let at = open + 2;
  while (
    at < nameLimit &&
    !isHtmlSpace(html.charCodeAt(at)) &&
    html.charCodeAt(at) !== SLASH &&
    html.charCodeAt(at) !== GT
  )
    at++;
  const element = html.slice(open + 1, at).toLowerCase();
  const attributes: Attribute[] = [];
  let end = length;
  let selfClosing = false;
  while (at < length) {
    let first = at;
    while (first < length && isHtmlSpace(html.charCodeAt(first))) first++;
    if (first >= length) break;
    const code = html.charCodeAt(first);
    if (code === GT) {
      end = first + 1;
      break;
    }
    if (code === SLASH && html.charCodeAt(first + 1) === GT) {
      end = first + 2;
      selfClosing = true;
      break;
    }
    if (!isNameCode(code)) {
      at = first + 1;
      continue;
    }
    let nameEnd = first + 1;
    while (nameEnd < length && isNameCode(html.charCodeAt(nameEnd))) nameEnd++;
    at = nameEnd;
    let equals = nameEnd;
    while (equals < length && isHtmlSpace(html.charCodeAt(equals))) equals++;
    if (html.charCodeAt(equals) !== EQUALS) continue;
    let valueAt = equals + 1;
    while (valueAt < length && isHtmlSpace(html.charCodeAt(valueAt))) valueAt++;
    if (valueAt >= length) continue;
    let start = -1;
    let stop = -1;
    const quote = html.charCodeAt(valueAt);
    if (quote === DQUOTE || quote === SQUOTE) {
      const close = html.indexOf(quote === DQUOTE ? '"' : "'", valueAt + 1);
      if (close !== -1) {
        start = valueAt + 1;
        stop = close;
        at = close + 1;
      }
    }
    if (start === -1) {
      let unquoted = valueAt;
      while (unquoted < length && !isHtmlSpace(html.charCodeAt(unquoted)) && html.charCodeAt(unquoted) !== GT)
        unquoted++;
      // No value at all (`name= >`): the name stands alone, as if there were no `=`.
      if (unquoted === valueAt) continue;
      start = valueAt;
      stop = unquoted;
      at = unquoted;
    }
    if (nameEnd - first > LONGEST_READ) continue;
    const name = html.slice(first, nameEnd).toLowerCase();
    if (READ_ATTRIBUTES.has(name)) attributes.push({ name, start, end: stop, raw: html.slice(start, stop) });
  }
  return { element, attributes, end, selfClosing };
}

function collect(element: string, attributes: Attribute[], refs: HtmlRef[]): void {
  const get = (name: string): Attribute | undefined => attributes.find((a) => a.name === name);
  const add = (attribute: Attribute | undefined, kind: HtmlRefKind): void => {
    if (attribute)
      refs.push({ start: attribute.start, end: attribute.end, value: decodeEntities(attribute.raw), kind });
  };
  for (const name of RESOURCE_ATTRIBUTES[element] ?? []) add(get(name), 'resource');
  if (element === 'link') {
    const rel = decodeEntities(get('rel')?.raw ?? '')
      .toLowerCase()
      .split(/[\t\n\f\r ]+/);
    if (rel.includes('stylesheet')) add(get('href'), 'stylesheet');
    else if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon')) add(get('href'), 'resource');
  }
  if (element === 'a' || element === 'area') add(get('href'), 'link');
  add(get('background'), 'resource');
  const srcset = SRCSET_ELEMENTS.has(element) ? get('srcset') : undefined;
  if (srcset) refs.push(...srcsetRefs(srcset));
  const style = get('style');
  if (style) {
    // Character references in a style attribute would shift CSS offsets; real pages never use them there.
    if (!style.raw.includes('&')) refs.push(...scanCss(style.raw, style.start).map(cssRef));
  }
}

function cssRef(ref: { start: number; end: number; value: string; kind: 'import' | 'url' }): HtmlRef {
  return { start: ref.start, end: ref.end, value: ref.value, kind: ref.kind === 'import' ? 'stylesheet' : 'resource' };
}

/** `a.png 1x, b.png 2x`: each candidate's URL is a reference of its own (the HTML srcset algorithm). */
function srcsetRefs(attribute: Attribute): HtmlRef[] {
  const refs: HtmlRef[] = [];
  const raw = attribute.raw;
  let i = 0;
  while (i < raw.length) {
    while (i < raw.length && (isHtmlSpace(raw.charCodeAt(i)) || raw[i] === ',')) i++;
    const start = i;
    while (i < raw.length && !isHtmlSpace(raw.charCodeAt(i))) i++;
    let end = i;
    const endsCandidate = raw[end - 1] === ',';
    while (end > start && raw[end - 1] === ',') end--;
    if (end > start) {
      const url = raw.slice(start, end);
      refs.push({
        start: attribute.start + start,
        end: attribute.start + end,
        value: decodeEntities(url),
        kind: 'resource',
      });
    }
    if (!endsCandidate) {
      let depth = 0;
      while (i < raw.length && (raw[i] !== ',' || depth > 0)) {
        if (raw[i] === '(') depth++;
        else if (raw[i] === ')') depth = Math.max(0, depth - 1);
        i++;
      }
    }
  }
  return refs;
}

function skipPast(html: string, from: number, marker: string): number {
  const at = html.indexOf(marker, from);
  return at < 0 ? html.length : at + marker.length;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The character references an attribute holding a URL may use; other named ones are left as written. */
export function decodeEntities(latin1: string): string {
  const decoded = latin1.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z]+));/g,
    (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
      // Only the table's own names: a plain object also answers `&constructor;` or `&toString;`.
      if (name !== undefined) return Object.hasOwn(NAMED, name) ? (NAMED[name] as string) : whole;
      const code = dec !== undefined ? Number(dec) : parseInt(hex as string, 16);
      const char = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
      return Buffer.from(char, 'utf8').toString('latin1');
    },
  );
  return Buffer.from(decoded, 'latin1').toString('utf8');
}
