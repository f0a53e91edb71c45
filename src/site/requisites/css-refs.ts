/**
 * References inside CSS: `url(...)` (quoted or not) and `@import "..."`. The scanner works on a
 * latin1 view of the bytes, so offsets are byte offsets and splicing a replacement in leaves every
 * other byte exactly as it was (UTF-8 text passes through untouched; only ASCII syntax matters).
 */
export interface CssRef {
  /** Offset of the reference text (inside the quotes, if any) in the scanned string. */
  start: number;
  end: number;
  /** The reference with CSS escapes decoded, as UTF-8 text. */
  value: string;
  /** `import` loads another stylesheet; `url` anything else (images, fonts, or an imported sheet). */
  kind: 'import' | 'url';
}

/** Scans `css` (latin1 text) for references; `offset` is added to every position reported. */
export function scanCss(css: string, offset = 0): CssRef[] {
  const refs: CssRef[] = [];
  // Most CSS a page carries is a widget's style attribute naming no URL: a reference needs one of these.
  if (!MAY_REFER.test(css)) return refs;
  let i = 0;
  while (i < css.length) {
    const c = css[i];
    if (c === '/' && css[i + 1] === '*') {
      const close = css.indexOf('*/', i + 2);
      i = close < 0 ? css.length : close + 2;
    } else if (c === '"' || c === "'") {
      i = skipString(css, i).next;
    } else if (c === '@' && /^@import\b/i.test(css.slice(i, i + 8))) {
      i = skipSpace(css, i + 7);
      if (css[i] === '"' || css[i] === "'") {
        const string = skipString(css, i);
        refs.push(ref(css, i + 1, string.contentEnd, offset, 'import'));
        i = string.next;
      } else if (isUrlToken(css, i)) {
        const url = readUrl(css, i, offset, 'import');
        if (url.ref) refs.push(url.ref);
        i = url.next;
      }
    } else if ((c === 'u' || c === 'U') && isUrlToken(css, i) && !isNameChar(css[i - 1])) {
      const url = readUrl(css, i, offset, 'url');
      if (url.ref) refs.push(url.ref);
      i = url.next;
    } else {
      i++;
    }
  }
  return refs;
}

/** What every reference the scanner reports starts with (see `isUrlToken` and the `@import` test). */
const MAY_REFER = /url\(|@import/i;

function isUrlToken(css: string, i: number): boolean {
  return css.slice(i, i + 4).toLowerCase() === 'url(';
}

function isNameChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_\\-]/.test(c);
}

function readUrl(css: string, at: number, offset: number, kind: CssRef['kind']): { ref?: CssRef; next: number } {
  let i = skipSpace(css, at + 4);
  if (css[i] === '"' || css[i] === "'") {
    const string = skipString(css, i);
    const ref_ = ref(css, i + 1, string.contentEnd, offset, kind);
    i = skipSpace(css, string.next);
    return { ref: ref_, next: css[i] === ')' ? i + 1 : i };
  }
  const start = i;
  while (i < css.length && css[i] !== ')') i += css[i] === '\\' ? 2 : 1;
  i = Math.min(i, css.length);
  let end = i;
  while (end > start && isSpace(css[end - 1])) end--;
  return { ref: ref(css, start, end, offset, kind), next: i + 1 };
}

function ref(css: string, start: number, end: number, offset: number, kind: CssRef['kind']): CssRef {
  return { start: start + offset, end: end + offset, value: decodeCssEscapes(css.slice(start, end)), kind };
}

/** A string token from its opening quote: where its content ends and where scanning goes on. */
function skipString(css: string, at: number): { contentEnd: number; next: number } {
  const quote = css[at];
  let i = at + 1;
  while (i < css.length && css[i] !== quote && css[i] !== '\n') i += css[i] === '\\' ? 2 : 1;
  const contentEnd = Math.min(i, css.length);
  return { contentEnd, next: Math.min(i + 1, css.length) };
}

/** CSS whitespace only: `\s` would also match 0xA0, a UTF-8 continuation byte in latin1 text. */
function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
}

function skipSpace(css: string, i: number): number {
  while (i < css.length && isSpace(css[i])) i++;
  return i;
}

/** `\2f` style hex escapes and `\x` literal escapes; the result is read back as UTF-8. */
export function decodeCssEscapes(latin1: string): string {
  const decoded = latin1.replace(
    /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\n)|(.))/g,
    (_, hex: string | undefined, newline: string | undefined, char: string | undefined) => {
      if (hex !== undefined)
        return Buffer.from(String.fromCodePoint(Math.min(parseInt(hex, 16), 0x10ffff) || 0xfffd), 'utf8').toString(
          'latin1',
        );
      if (newline !== undefined) return '';
      return char ?? '';
    },
  );
  return Buffer.from(decoded, 'latin1').toString('utf8');
}
