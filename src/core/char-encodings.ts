/**
 * How one character may be written in the text of a body: as is, percent-encoded (`%41`,
 * `%u0041`), as a JSON or JavaScript escape (`\u0041`, `\x41`, `\u{41}`, `\/`), as a CSS escape
 * (`\41 `) or as an HTML character reference (`&#65;`, `&#x41;`, `&amp;`). Each reader says where
 * the encoded character starting at a place ends, for core/secret-marker.ts to walk a key with.
 */

/** The most bytes one encoded character takes: `&#x` and MAX_DIGITS digits and `;`. */
export const MAX_UNIT_BYTES = 24;
/** Digits read in a numeric reference, leading zeros included; more are not a character of a key. */
const MAX_DIGITS = 16;

export const NO = -1;
/** The bytes end before it can be told whether a key is there. */
export const MORE = -2;

export const PERCENT = 0x25;
export const BACKSLASH = 0x5c;
export const AMPERSAND = 0x26;
const SEMICOLON = 0x3b;
export const HASH = 0x23;
export const HEX_DIGITS = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));

/**
 * HTML's named references to printable ASCII characters; `*` marks the legacy ones a browser also
 * reads without their semicolon.
 */
const NAMED: Record<string, string[]> = {
  '!': ['excl'],
  '"': ['quot*', 'QUOT*'],
  '#': ['num'],
  $: ['dollar'],
  '%': ['percnt'],
  '&': ['amp*', 'AMP*'],
  "'": ['apos'],
  '(': ['lpar'],
  ')': ['rpar'],
  '*': ['ast', 'midast'],
  '+': ['plus'],
  ',': ['comma'],
  '.': ['period'],
  '/': ['sol'],
  ':': ['colon'],
  ';': ['semi'],
  '<': ['lt*', 'LT*'],
  '=': ['equals'],
  '>': ['gt*', 'GT*'],
  '?': ['quest'],
  '@': ['commat'],
  '[': ['lsqb', 'lbrack'],
  '\\': ['bsol'],
  ']': ['rsqb', 'rbrack'],
  '^': ['Hat'],
  _: ['lowbar', 'UnderBar'],
  '`': ['grave', 'DiacriticalGrave'],
  '{': ['lcub', 'lbrace'],
  '|': ['verbar', 'vert', 'VerticalLine'],
  '}': ['rcub', 'rbrace'],
};

export interface EntityName {
  bytes: Buffer;
  legacy: boolean;
}

/** HTML's names for a character, with whether each may go without its semicolon. */
export function entityNames(char: string): EntityName[] {
  return (NAMED[char] ?? []).map((name) => ({
    bytes: Buffer.from(name.replace('*', ''), 'latin1'),
    legacy: name.endsWith('*'),
  }));
}

/**
 * Every byte an encoding of `char` may be written with, in any of the forms read here: the
 * character itself, the escape introducers and what follows them (`u`, `x`, `{`, `}`, `#`, `;`),
 * hex and decimal digits in either case, the whitespace a CSS escape may end with, and the
 * letters of the character's HTML names. A key written in any mix of the forms is a run of these
 * bytes, which is what lets core/secret-marker.ts skip over everything else.
 */
export function encodingBytes(char: string): number[] {
  const bytes = [char.charCodeAt(0), PERCENT, BACKSLASH, AMPERSAND, HASH, SEMICOLON];
  for (const c of 'uUxX{}0123456789abcdefABCDEF \t\n\f\r') bytes.push(c.charCodeAt(0));
  for (const name of entityNames(char)) bytes.push(...name.bytes);
  return bytes;
}

/**
 * Where the character `code`, written in one of the escapes from `i` (at a `%`, `\\` or `&`), ends;
 * NO when it is not written there, MORE when `buf` ends too soon to tell (never when `final`).
 */
export function encodedEnd(buf: Buffer, i: number, code: number, names: readonly EntityName[], final: boolean): number {
  const b = buf[i];
  if (b === PERCENT) return percentEnd(buf, i, code, final);
  if (b === BACKSLASH) return escapeEnd(buf, i, code, final);
  if (b === AMPERSAND) return referenceEnd(buf, i, code, names, final);
  return NO;
}

/** `%41`, `%u0041`. */
function percentEnd(buf: Buffer, i: number, code: number, final: boolean): number {
  if (i + 1 >= buf.length) return final ? NO : MORE;
  const u = buf[i + 1] === 0x75 || buf[i + 1] === 0x55;
  return fixedHex(buf, u ? i + 2 : i + 1, u ? 4 : 2, code, final);
}

/** `\u0041`, `\u{41}`, `\x41`, CSS `\41 `, and `\/` (a character escaped as itself). */
function escapeEnd(buf: Buffer, i: number, code: number, final: boolean): number {
  if (i + 1 >= buf.length) return final ? NO : MORE;
  const n = buf[i + 1] as number;
  let end = NO;
  if (n === 0x75 && buf[i + 2] === 0x7b) {
    end = hexRun(buf, i + 3, 8, false, code, final);
    if (end >= 0) end = end >= buf.length ? (final ? NO : MORE) : buf[end] === 0x7d ? end + 1 : NO;
  } else if (n === 0x75) end = fixedHex(buf, i + 2, 4, code, final);
  else if (n === 0x78) end = fixedHex(buf, i + 2, 2, code, final);
  else if (hexValue(n) >= 0) return cssEscapeEnd(buf, hexRun(buf, i + 1, 6, true, code, final), final);
  if (end !== NO) return end;
  // CSS and JS read a backslash before any other character as that character.
  return n === code ? i + 2 : NO;
}

/** CSS takes one whitespace after a hex escape as part of it. */
function cssEscapeEnd(buf: Buffer, end: number, final: boolean): number {
  if (end < 0) return end;
  if (end >= buf.length) return final ? end : MORE;
  const w = buf[end] as number;
  if (w === 0x0d) {
    if (end + 1 >= buf.length) return final ? end + 1 : MORE;
    return buf[end + 1] === 0x0a ? end + 2 : end + 1;
  }
  return w === 0x20 || w === 0x09 || w === 0x0a || w === 0x0c ? end + 1 : end;
}

/** `&#65;`, `&#x41;`, `&amp;`, and the legacy names without their semicolon. */
function referenceEnd(buf: Buffer, i: number, code: number, names: readonly EntityName[], final: boolean): number {
  if (i + 1 >= buf.length) return final ? NO : MORE;
  if (buf[i + 1] === HASH) {
    if (i + 2 >= buf.length) return final ? NO : MORE;
    const x = buf[i + 2] === 0x78 || buf[i + 2] === 0x58;
    const end = x ? hexRun(buf, i + 3, MAX_DIGITS, false, code, final) : decimalRun(buf, i + 2, code, final);
    if (end < 0) return end;
    if (end >= buf.length) return final ? end : MORE;
    return buf[end] === SEMICOLON ? end + 1 : end;
  }
  let more = false;
  for (const name of names) {
    const end = i + 1 + name.bytes.length;
    const seen = Math.min(end, buf.length) - (i + 1);
    if (buf.compare(name.bytes, 0, seen, i + 1, i + 1 + seen) !== 0) continue;
    if (end >= buf.length) {
      // Cut short: more may come; at the very end only a legacy name stands without its semicolon.
      if (!final) more = true;
      else if (end === buf.length && name.legacy) return end;
      continue;
    }
    if (buf[end] === SEMICOLON) return end + 1;
    if (name.legacy) return end;
  }
  return more ? MORE : NO;
}

/** Exactly `count` hex digits from `from` whose value is `code`: where they end, else NO or MORE. */
function fixedHex(buf: Buffer, from: number, count: number, code: number, final: boolean): number {
  let value = 0;
  for (let j = from; j < from + count; j++) {
    if (j >= buf.length) return final ? NO : MORE;
    const h = hexValue(buf[j] as number);
    if (h < 0) return NO;
    value = value * 16 + h;
  }
  return value === code ? from + count : NO;
}

/**
 * One to `max` hex digits from `from`, as many as there are, whose value is `code`. A `bounded`
 * run (CSS) ends after `max` whatever follows; an unbounded one with more digits than `max` is a
 * number too long to be a character of a key.
 */
function hexRun(buf: Buffer, from: number, max: number, bounded: boolean, code: number, final: boolean): number {
  return digitRun(buf, from, max, bounded, code, final, hexValue, 16);
}

function decimalRun(buf: Buffer, from: number, code: number, final: boolean): number {
  return digitRun(buf, from, MAX_DIGITS, false, code, final, decimalValue, 10);
}

function digitRun(
  buf: Buffer,
  from: number,
  max: number,
  bounded: boolean,
  code: number,
  final: boolean,
  digit: (b: number) => number,
  base: number,
): number {
  let value = 0;
  let j = from;
  for (; j < from + max; j++) {
    if (j >= buf.length) {
      if (!final) return value > code ? NO : MORE;
      break;
    }
    const d = digit(buf[j] as number);
    if (d < 0) break;
    value = value * base + d;
  }
  if (j === from || value !== code) return NO;
  if (!bounded && j === from + max) {
    if (j >= buf.length) return final ? j : MORE;
    if (digit(buf[j] as number) >= 0) return NO;
  }
  return j;
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function decimalValue(b: number): number {
  return b >= 0x30 && b <= 0x39 ? b - 0x30 : -1;
}
