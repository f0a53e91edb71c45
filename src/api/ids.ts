import { RabbitError } from '../core/errors.js';

/**
 * Identifier shapes from service-api.md section 2. Ids are strings all the way through:
 * `page0001` and `page1` are different pages, so nothing here parses digits as numbers.
 * An id that does not fit its shape never reaches a URL or an archive entry name.
 */
export type IdKind = 'prototype' | 'page' | 'layer' | 'element' | 'discussion';

const SHAPES: Record<IdKind, RegExp> = {
  prototype: /^\d{1,30}$/,
  page: /^page\d{1,30}$/,
  layer: /^layer\d{1,30}$/,
  element: /^element\d{1,30}$/,
  discussion: /^\d{1,30}$/,
};

/** The kinds of id, in the order the service's documentation gives them. */
export const ID_KINDS = Object.keys(SHAPES) as IdKind[];

/**
 * Whether the page or layer an element belongs to, named by its id alone, is a layer: the two
 * shapes differ by their prefix. An id of neither shape (an archive someone hands us) counts as a
 * page, as the service's lists of a page's elements came first. The one rule for every reader of
 * an archive and for restore: a parent is never a page to one and a layer to another.
 */
export function ownerKindOf(id: string): 'page' | 'layer' {
  return id.startsWith('layer') ? 'layer' : 'page';
}

/**
 * A JSON number as its text, as lossless-json's parser hands it over (a LosslessNumber). Told by
 * its shape rather than by importing lossless-json here: the flag definitions load this module, and
 * `--help` loads nothing but commander.
 */
interface NumberText {
  isLosslessNumber: true;
  value: string;
}

function isNumberText(raw: unknown): raw is NumberText {
  return (
    typeof raw === 'object' &&
    raw !== null &&
    (raw as Partial<NumberText>).isLosslessNumber === true &&
    typeof (raw as Partial<NumberText>).value === 'string'
  );
}

/**
 * Integer ids arrive as JSON numbers. Read by an id-list reader (parse.ts) they come as the
 * number's text (a LosslessNumber) and are used by their digits, however many; a number already
 * parsed by JSON.parse is trusted only while it is a safe integer, since past 2^53 it has been
 * rounded to a neighbour's id.
 */
export function normalizeId(kind: IdKind, raw: unknown): string | undefined {
  if (kind === 'prototype' || kind === 'discussion') {
    if (isNumberText(raw)) {
      const digits = integerDigits(raw.value);
      return digits !== undefined && SHAPES[kind].test(digits) ? digits : undefined;
    }
    if (typeof raw === 'number') {
      return Number.isSafeInteger(raw) && raw >= 0 ? String(raw) : undefined;
    }
    // Some services send integer ids as strings; accept them when they are digits only.
    if (typeof raw === 'string' && SHAPES[kind].test(raw)) return raw;
    return undefined;
  }
  return typeof raw === 'string' && SHAPES[kind].test(raw) ? raw : undefined;
}

/**
 * The digits of the non-negative integer a JSON number's text denotes, computed on the text (no
 * floating point, so no rounding): `9007199254740993` is itself, `12.0` and `1.2e1` are `12`, `-0`
 * is `0`. Undefined for a fraction, a negative number or more than MAX_INTEGER_DIGITS digits.
 * JSON writes no leading zeros, so digits as served come back unchanged.
 */
export function integerDigits(text: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign, whole = '', fraction = '', exponent] = match;
  let digits = whole + fraction;
  let point = whole.length + (exponent === undefined ? 0 : Number(exponent));
  const lead = /^0*/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(lead);
  point -= lead;
  if (digits === '') return '0';
  if (sign === '-' || point <= 0 || point > MAX_INTEGER_DIGITS) return undefined;
  if (!/^0*$/.test(digits.slice(point))) return undefined;
  return digits.slice(0, point).padEnd(point, '0');
}

/** The longest integer id the shapes above accept. */
const MAX_INTEGER_DIGITS = 30;

export function isValidId(kind: IdKind, raw: unknown): boolean {
  return normalizeId(kind, raw) !== undefined;
}

export function requireId(kind: IdKind, raw: unknown, source: string): string {
  const id = normalizeId(kind, raw);
  if (id === undefined) {
    throw new RabbitError('BAD_ID', `${kind} id ${describe(raw)} does not have the documented shape`, {
      source,
      id: describe(raw),
    });
  }
  return id;
}

/** A short printable rendering of an untrusted value for error messages. */
export function describe(raw: unknown): string {
  if (isNumberText(raw)) return raw.value.length > 80 ? `${raw.value.slice(0, 77)}...` : raw.value;
  let text: string;
  try {
    text = typeof raw === 'string' ? JSON.stringify(raw) : (JSON.stringify(raw) ?? String(raw));
  } catch {
    text = String(raw);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Natural order for ids and entry paths: digit runs compare as numbers (prototype 9 before 10,
 * page2 before page10), leading zeros and everything else break ties by code unit, so the order is
 * total and the same on every machine. Hand-rolled because Intl.Collator costs microseconds a
 * comparison, and sorting a million-entry manifest makes tens of millions of them.
 */
export function compareIds(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      let ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      let si = i;
      let sj = j;
      while (si < ei - 1 && a.charCodeAt(si) === 48) si++;
      while (sj < ej - 1 && b.charCodeAt(sj) === 48) sj++;
      const lengths = ei - si - (ej - sj);
      if (lengths !== 0) return lengths;
      for (; si < ei; si++, sj++) {
        const d = a.charCodeAt(si) - b.charCodeAt(sj);
        if (d !== 0) return d;
      }
      i = ei;
      j = ej;
      continue;
    }
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  if (a.length - i !== b.length - j) return a.length - i - (b.length - j);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A string whose plain code-unit order is compareIds' order, for sorting many paths: each digit
 * run is written without its leading zeros, after its length as two digits, so comparing keys
 * with `<` compares runs as numbers (and a run against any other character as its first digit
 * would). Ids whose runs differ only in leading zeros get the same key: compare those with
 * compareIds. undefined for a run of 100 digits or more, which two digits cannot count. A key is
 * built once per entry, so a big manifest sorts without parsing its ids at every comparison.
 */
export function idSortKey(id: string): string | undefined {
  let key = '';
  let from = 0;
  for (let i = 0; i < id.length; i++) {
    if (!isDigit(id.charCodeAt(i))) continue;
    let end = i + 1;
    while (end < id.length && isDigit(id.charCodeAt(end))) end++;
    let start = i;
    while (start < end - 1 && id.charCodeAt(start) === 48) start++;
    const length = end - start;
    if (length > 99) return undefined;
    key += `${id.slice(from, i)}${length < 10 ? '0' : ''}${length}${id.slice(start, end)}`;
    from = end;
    i = end - 1;
  }
  return from === 0 ? id : key + id.slice(from);
}

/** Orders values by their idSortKey (`key`) where both have one, else by compareIds of `id`. */
export function compareByIdKey(
  a: { key: string | undefined; id: string },
  b: { key: string | undefined; id: string },
): number {
  if (a.key !== undefined && b.key !== undefined && a.key !== b.key) return a.key < b.key ? -1 : 1;
  return compareIds(a.id, b.id);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
