/**
 * The run's API keys found and replaced in bytes and text, in the encodings a service or a page
 * may write them in: as is, percent-encoded (`%41`, `%u0041`, either case of hex), as JSON or JS
 * escapes (`\u0041`, `\x41`, `\u{41}`, `\/`), as CSS escapes (`\41 `), and as HTML character
 * references (`&#65;`, `&#x41;`, `&amp;`, legacy `&amp` without its semicolon). Each character
 * of a key may be written in any of them, mixed. Every occurrence is replaced by KEY_MARKER.
 *
 * Bytes stream through `KeyReplacer` as they arrive: what could still be the start of a key at the
 * end of one chunk is held back until the next (at most a key's length of its longest encoding),
 * so memory is flat however large the body. A place is tried only where its first two bytes can
 * begin a key in one of the encodings, found by one regular expression, so a body without a key
 * costs one native pass over its bytes and little else.
 */
export const KEY_MARKER = 'REDACTED-API-KEY';

const MARKER_BYTES = Buffer.from(KEY_MARKER, 'latin1');
/** Shorter keys are not looked for: replacing every three-letter word of a body would wreck it. */
const MIN_KEY_LENGTH = 4;
/** The most bytes one encoded character takes: `&#x` and MAX_DIGITS digits and `;`. */
const MAX_UNIT_BYTES = 24;
/** Digits read in a numeric reference, leading zeros included; more are not a character of a key. */
const MAX_DIGITS = 16;

const NO = -1;
/** The bytes end before it can be told whether a key is there. */
const MORE = -2;

const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const AMPERSAND = 0x26;
const SEMICOLON = 0x3b;
const HASH = 0x23;
const HEX_DIGITS = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));

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

interface EntityName {
  bytes: Buffer;
  legacy: boolean;
}

/** A key as the matcher walks it: each character's code and its HTML names. */
interface CompiledKey {
  codes: number[];
  names: EntityName[][];
}

/**
 * The keys of a run, ready to be looked for. `of` gives undefined when there is nothing to look
 * for (no key long enough), so callers skip the scan altogether.
 */
export class SecretMarker {
  readonly keys: readonly CompiledKey[];
  /**
   * Finds the places where a match can begin: pairs of bytes that start one of the encodings of a
   * key's first character (or the character itself and the start of its second), in latin1 text.
   * The regular expression engine skips over everything else in native code.
   */
  readonly starts: RegExp;
  /** The bytes a match can begin with: at the very end of a chunk, its second byte is not known yet. */
  readonly firsts: Uint8Array;
  /** The most bytes a match can span: held back at the end of a chunk while undecided. */
  readonly window: number;

  private constructor(keys: readonly string[]) {
    // Longest first: where one key begins another, the whole of the longer one goes.
    const sorted = [...keys].sort((a, b) => b.length - a.length);
    this.keys = sorted.map(compileKey);
    const pairs = new Map<number, Set<number>>();
    for (const key of this.keys) startPairs(key, pairs);
    this.firsts = new Uint8Array(256);
    for (const first of pairs.keys()) this.firsts[first] = 1;
    const pattern = [...pairs].map(([first, seconds]) => `${byteClass([first])}${byteClass([...seconds])}`);
    this.starts = new RegExp(pattern.join('|'), 'g');
    this.window = (sorted[0]?.length ?? 0) * MAX_UNIT_BYTES;
  }

  static of(keys: readonly string[]): SecretMarker | undefined {
    const usable = [...new Set(keys)].filter((key) => key.length >= MIN_KEY_LENGTH && /^[\x21-\x7e]+$/.test(key));
    return usable.length === 0 ? undefined : new SecretMarker(usable);
  }

  replacer(): KeyReplacer {
    return new KeyReplacer(this);
  }

  /** Text with every key in it replaced, and how many there were. */
  redact(text: string): { text: string; count: number } {
    const replacer = this.replacer();
    const head = replacer.push(Buffer.from(text, 'utf8'));
    const rest = replacer.end();
    if (replacer.count === 0) return { text, count: 0 };
    return { text: Buffer.concat([head, rest]).toString('utf8'), count: replacer.count };
  }

  /** Text with every key in it replaced. */
  redactText(text: string): string {
    return this.redact(text).text;
  }

  /** Where a key written from `at` ends in `buf`, NO when none is there, MORE when `buf` ends too soon to tell. */
  matchAt(buf: Buffer, at: number, final: boolean): number {
    for (const key of this.keys) {
      const end = keyEnd(buf, at, key, 0, final);
      if (end !== NO) return end;
    }
    return NO;
  }
}

/**
 * One body's bytes with the keys replaced, chunk by chunk: `push` gives what may be passed on now,
 * `end` the rest. `count` is how many keys were replaced.
 */
export class KeyReplacer {
  count = 0;
  private tail: Buffer | undefined;
  constructor(private readonly marker: SecretMarker) {}

  push(chunk: Buffer): Buffer {
    const buf = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    this.tail = undefined;
    return this.scan(buf, false);
  }

  end(): Buffer {
    const buf = this.tail ?? Buffer.alloc(0);
    this.tail = undefined;
    return this.scan(buf, true);
  }

  private scan(buf: Buffer, final: boolean): Buffer {
    const { starts, firsts } = this.marker;
    let parts: Buffer[] | undefined;
    let from = 0;
    let held = buf.length;
    const text = buf.toString('latin1');
    starts.lastIndex = 0;
    for (let found = starts.exec(text); found !== null; found = starts.exec(text)) {
      const p = found.index;
      const end = this.marker.matchAt(buf, p, final);
      if (end === MORE) {
        held = p;
        break;
      }
      if (end === NO) {
        starts.lastIndex = p + 1;
        continue;
      }
      (parts ??= []).push(buf.subarray(from, p), MARKER_BYTES);
      this.count++;
      from = end;
      starts.lastIndex = end;
    }
    // A last byte that may begin a match: its second byte comes with the next chunk.
    if (!final && held === buf.length && buf.length > from && firsts[buf[buf.length - 1] as number] === 1)
      held = buf.length - 1;
    // A copy: the chunk it is part of goes on to be kept by whoever reads this body.
    if (held < buf.length) this.tail = Buffer.from(buf.subarray(held));
    if (!parts) return from === 0 && held === buf.length ? buf : buf.subarray(from, held);
    parts.push(buf.subarray(from, held));
    return Buffer.concat(parts);
  }
}

function compileKey(key: string): CompiledKey {
  const chars = [...key];
  return {
    codes: chars.map((c) => c.charCodeAt(0)),
    names: chars.map((c) =>
      (NAMED[c] ?? []).map((name) => ({
        bytes: Buffer.from(name.replace('*', ''), 'latin1'),
        legacy: name.endsWith('*'),
      })),
    ),
  };
}

/** The pairs of bytes (a first, and the seconds it may be followed by) the encodings of the key's start begin with. */
function startPairs(key: CompiledKey, pairs: Map<number, Set<number>>): void {
  const [first, second] = key.codes as [number, number];
  const allow = (a: number, bytes: readonly number[]): void => {
    const seconds = pairs.get(a) ?? new Set<number>();
    for (const b of bytes) seconds.add(b);
    pairs.set(a, seconds);
  };
  allow(first, [second, PERCENT, BACKSLASH, AMPERSAND]);
  const high = HEX_DIGITS[first >> 4] as number;
  allow(PERCENT, [high, 0x75, 0x55]);
  // A CSS escape may have leading zeros; the identity escape is the character itself.
  allow(BACKSLASH, [0x30, high, 0x75, 0x78, first]);
  allow(AMPERSAND, [HASH, ...(key.names[0] ?? []).map((name) => name.bytes[0] as number)]);
}

/** A regular expression class of exactly the given bytes, in latin1 text. */
function byteClass(bytes: readonly number[]): string {
  return `[${bytes.map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')}]`;
}

/**
 * Where the rest of `key`, from its character `k`, written from `i` ends. A `%`, `\` or `&` in a
 * key may stand for itself or begin an escape: both readings are tried.
 */
function keyEnd(buf: Buffer, i: number, key: CompiledKey, k: number, final: boolean): number {
  if (k === key.codes.length) return i;
  if (i >= buf.length) return final ? NO : MORE;
  const code = key.codes[k] as number;
  const b = buf[i] as number;
  let literal = NO;
  if (b === code) {
    literal = keyEnd(buf, i + 1, key, k + 1, final);
    if (literal >= 0) return literal;
  }
  const unit =
    b === PERCENT
      ? percentEnd(buf, i, code, final)
      : b === BACKSLASH
        ? escapeEnd(buf, i, code, final)
        : b === AMPERSAND
          ? referenceEnd(buf, i, code, key.names[k] as EntityName[], final)
          : NO;
  if (unit === MORE) return MORE;
  if (unit === NO) return literal;
  const escaped = keyEnd(buf, unit, key, k + 1, final);
  return escaped >= 0 || escaped === MORE ? escaped : literal;
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
