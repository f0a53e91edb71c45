import { decodeCssEscapes } from './requisites/css-refs.js';

/**
 * CSS made safe for a view: every place a browser could take a URL from is rewritten or made inert.
 * The crawl's scanner (css-refs.ts) finds what to fetch; this one must also find what a hostile
 * sheet hides from it, so it reads names as the CSS tokenizer does, escapes decoded: `\75 rl(` is
 * `url(`, `@\69mport` is `@import`. Strings count as URLs where a browser may load them: an
 * `@import` prelude, the arguments of `image-set()` and of any function not known to take plain
 * text, and custom properties (whose value `var()` can put into an `image-set()`).
 */

/** What a reference becomes: a URL to write in its place, or undefined for an inert one. */
export type CssRewrite = (value: string, kind: 'stylesheet' | 'resource') => string | undefined;

/** What an inert reference becomes: an empty resource, which loads nothing from anywhere. */
export const INERT_URL = 'data:,';

/** Functions whose string arguments are text, never a URL (fonts by name, counters, selectors...). */
const TEXT_FUNCTIONS = new Set([
  'local',
  'format',
  'tech',
  'counter',
  'counters',
  'symbols',
  'attr',
  'var',
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

/** Blocks that are no function; `CLOSING` maps each closing character to what it closes ('(' any function too). */
const BLOCKS = new Set(['(', '[', '{']);
const CLOSING: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** Functions whose one argument, quoted or not, is a URL. */
const URL_FUNCTIONS = new Set(['url', 'src']);

export interface CleanedCss {
  /** The text with every reference replaced (latin1, like the input). */
  text: string;
  /** How many references it held: none means the text is safe as it is. */
  references: number;
}

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
const isNameStart = (c: string | undefined): boolean => c !== undefined && (/[A-Za-z_]/.test(c) || c >= '\u0080');
const isNameChar = (c: string | undefined): boolean => isNameStart(c) || (c !== undefined && /[0-9-]/.test(c));
const isEscape = (css: string, i: number): boolean => css[i] === '\\' && css[i + 1] !== '\n' && i + 1 < css.length;

function startsName(css: string, i: number): boolean {
  if (isNameStart(css[i]) || isEscape(css, i)) return true;
  if (css[i] !== '-') return false;
  return css[i + 1] === '-' || isNameStart(css[i + 1]) || isEscape(css, i + 1);
}

/** The end of the name (ident sequence) at `i`, escapes included. */
function nameEnd(css: string, i: number): number {
  while (i < css.length) {
    if (isEscape(css, i)) {
      const hex = /^[0-9a-fA-F]{1,6}[ \t\n\r\f]?/.exec(css.slice(i + 1, i + 8));
      i += 1 + (hex ? hex[0].length : 1);
    } else if (isNameChar(css[i])) i++;
    else break;
  }
  return i;
}

/** The end of the string token whose quote is at `at`, and where its content ends. */
function stringEnd(css: string, at: number): { contentEnd: number; next: number } {
  const quote = css[at];
  let i = at + 1;
  while (i < css.length && css[i] !== quote && css[i] !== '\n') i += css[i] === '\\' ? 2 : 1;
  i = Math.min(i, css.length);
  return { contentEnd: i, next: css[i] === quote ? i + 1 : i };
}

/**
 * A URL written back as a CSS string. Besides the string's own delimiters, `<`, `>` and `&` are
 * written as escapes: the URL was read with its escapes decoded (`\3c/style\3e` is `</style>`),
 * and written back literally inside an HTML `<style>` it would close the element and turn what
 * follows into markup. A CSS escape means the same character to the CSS reader and nothing to the
 * HTML one. Bytes beyond ASCII are kept as latin1 characters: the text is a latin1 view of UTF-8.
 */
export function quoted(url: string): string {
  const ascii = Buffer.from(url, 'utf8').toString('latin1');
  return `"${ascii.replace(/[\\"]/g, '\\$&').replace(/[\n\r\f<>&]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `)}"`;
}

/**
 * Whether CSS text can hold a reference at all: every one needs a function's parenthesis, a
 * string, an at-rule or an escape that could spell one. Most inline styles (`left:10px;top:4px`)
 * have none and are kept as they are without being read.
 */
export function mayHoldReference(css: string): boolean {
  return /[("'\\@]/.test(css);
}

/**
 * `css` (a latin1 view of its bytes) with every reference rewritten: `url()` and `src()` however
 * written, and strings where a browser may load them. Anything `rewrite` declines becomes inert.
 */
export function cleanCss(source: string, rewrite: CssRewrite): CleanedCss {
  const css = preprocessed(source);
  let out = '';
  let references = 0;
  // Open blocks: a function's name, '(' for a plain parenthesis, '[' and, inside a custom
  // property's value, '{'. Each is closed only by its own closing character.
  const functions: string[] = [];
  let inImport = false;
  let inCustomProperty = false;
  const replace = (raw: string): string => {
    references++;
    return quoted(rewrite(decodeCssEscapes(raw), inImport ? 'stylesheet' : 'resource') ?? INERT_URL);
  };
  let i = 0;
  while (i < css.length) {
    const c = css[i] as string;
    if (c === '/' && css[i + 1] === '*') {
      const close = css.indexOf('*/', i + 2);
      const next = close < 0 ? css.length : close + 2;
      out += css.slice(i, next);
      i = next;
    } else if (c === '"' || c === "'") {
      const { contentEnd, next } = stringEnd(css, i);
      const inUrlFunction = functions.some((f) => !BLOCKS.has(f) && !TEXT_FUNCTIONS.has(f));
      if ((inImport && functions.length === 0) || inUrlFunction || inCustomProperty)
        out += replace(css.slice(i + 1, contentEnd));
      else out += css.slice(i, next);
      i = next;
    } else if (c === '@' && startsName(css, i + 1)) {
      const end = nameEnd(css, i + 1);
      if (decodeCssEscapes(css.slice(i + 1, end)).toLowerCase() === 'import') inImport = true;
      out += css.slice(i, end);
      i = end;
    } else if (startsName(css, i)) {
      const end = nameEnd(css, i);
      const name = decodeCssEscapes(css.slice(i, end)).toLowerCase();
      if (css[end] === '(' && URL_FUNCTIONS.has(name)) {
        const url = readUrlArgument(css, end + 1);
        out += `url(${replace(url.raw)})`;
        i = url.next;
      } else if (css[end] === '(') {
        functions.push(name);
        out += css.slice(i, end + 1);
        i = end + 1;
      } else {
        if (functions.length === 0 && name.startsWith('--') && css.slice(end).trimStart().startsWith(':'))
          inCustomProperty = true;
        out += css.slice(i, end);
        i = end;
      }
    } else if (c === '\\') {
      // A backslash that starts no name (before a newline): a delimiter, as the tokenizer reads it.
      out += c;
      i++;
    } else {
      const closes = CLOSING[c];
      if (c === '(' || c === '[' || (c === '{' && inCustomProperty)) functions.push(c);
      else if (closes !== undefined && functions.length > 0) {
        const open = functions.at(-1) as string;
        if (open === closes || (closes === '(' && !BLOCKS.has(open))) functions.pop();
      } else if ((c === ';' || c === '{' || c === '}') && functions.length === 0) {
        inImport = false;
        inCustomProperty = false;
      }
      out += c;
      i++;
    }
  }
  return { text: out, references };
}

/**
 * CSS as its tokenizer sees it (CSS Syntax, "preprocessing the input stream"): CR, CR LF and form
 * feed are one newline, which ends a string; NUL is U+FFFD (its UTF-8 bytes, the text being a latin1
 * view). Read without this, `"a\r;background:url(x)"` would be one string to us and a string, a
 * declaration and a URL to a browser. What is written back is the preprocessed text: the same sheet.
 */
function preprocessed(css: string): string {
  return /[\r\f\0]/.test(css) ? css.replace(/\r\n?|\f/g, '\n').replace(/\0/g, '\xef\xbf\xbd') : css;
}

/**
 * The argument of `url(` or `src(` from just after its parenthesis: a string, or the raw text up to
 * the closing parenthesis (a malformed one included: it becomes a well-formed inert URL).
 */
function readUrlArgument(css: string, at: number): { raw: string; next: number } {
  let i = at;
  while (isSpace(css[i])) i++;
  if (css[i] === '"' || css[i] === "'") {
    const { contentEnd, next } = stringEnd(css, i);
    let after = next;
    while (isSpace(css[after])) after++;
    return { raw: css.slice(i + 1, contentEnd), next: css[after] === ')' ? after + 1 : after };
  }
  const start = i;
  while (i < css.length && css[i] !== ')') i += css[i] === '\\' ? 2 : 1;
  i = Math.min(i, css.length);
  let end = i;
  while (end > start && isSpace(css[end - 1])) end--;
  return { raw: css.slice(start, end), next: Math.min(i + 1, css.length) };
}

/** Inline CSS (a style attribute or element, as the parser decoded it) cleaned through a latin1 view. */
export function cleanInlineCss(css: string, rewrite: CssRewrite): string {
  if (!mayHoldReference(css)) return css;
  const cleaned = cleanCss(Buffer.from(css, 'utf8').toString('latin1'), rewrite);
  return cleaned.references === 0 ? css : Buffer.from(cleaned.text, 'latin1').toString('utf8');
}
