/**
 * The run's API keys found and replaced in bytes and text, in the encodings a service or a page
 * may write them in (core/char-encodings.ts: as is, percent-encoded, JSON, JavaScript and CSS
 * escapes, HTML character references), each character of a key in any of them, mixed. Every
 * occurrence is replaced by KEY_MARKER.
 *
 * Bytes stream through `KeyReplacer` as they arrive: what could still be the start of a key at the
 * end of one chunk is held back until the next (at most `window` bytes), so memory is flat however
 * large the body. A PNG's text chunks are read first (core/png-text-keys.ts), and what this scan
 * passes on is read again for the keys' base64 (core/base64-keys.ts) and as UTF-16
 * (core/wide-keys.ts).
 *
 * Every body is scanned (a PNG's compressed bytes too), so the scan must cost little more than
 * reading the bytes. A key, however it is written, is a run of at least as many bytes as its
 * characters, every one of them a byte its encodings use (`encodingBytes`): a hex key's digits,
 * `%`, `\`, `&`, `#`, `;`, `u`, `x`, whitespace... So the scan looks at one byte in every
 * shortest key's length: where that byte is not one of them, no key can cover it, and the bytes
 * up to the next look are passed over unread. Only a run of such bytes as long as a key is
 * searched for places where a key can begin (the pairs of bytes its encodings start with, one
 * regular expression) and walked there. Random bytes, as a PNG's are, run long in no alphabet.
 */
import { Base64Keys, type Base64KeyReplacer } from './base64-keys.js';
import { PNG_SIGNATURE, PngTextKeys } from './png-text-keys.js';
import { WideKeyReplacer } from './wide-keys.js';
import {
  AMPERSAND,
  BACKSLASH,
  encodedEnd,
  encodingBytes,
  entityNames,
  HASH,
  HEX_DIGITS,
  MAX_UNIT_BYTES,
  MORE,
  NO,
  PERCENT,
  type EntityName,
} from './char-encodings.js';

export const KEY_MARKER = 'REDACTED-API-KEY';

const MARKER_BYTES = Buffer.from(KEY_MARKER, 'latin1');
const NOTHING = Buffer.alloc(0);
/** Shorter keys are not looked for: replacing every three-letter word of a body would wreck it. */
const MIN_KEY_LENGTH = 4;
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
  /** The most bytes a match can span, one byte a character. */
  readonly span: number;
  /** The most bytes a replacer holds back at the end of a chunk while undecided: a span, a UTF-16 one, a base64 run. */
  readonly window: number;
  /** 1 for each byte some encoding of some key may be written with (see the top of this file). */
  readonly alphabet: Uint8Array;
  /** The fewest bytes a match can span: the shortest key, every character as is. */
  readonly shortest: number;
  /** The keys' base64 and base64url runs; undefined when every key is too short to have one worth looking for. */
  readonly base64: Base64Keys | undefined;

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
    this.span = (sorted[0]?.length ?? 0) * MAX_UNIT_BYTES;
    this.base64 = Base64Keys.of(sorted, KEY_MARKER);
    this.window = 3 * this.span + (this.base64?.holdMost ?? 0);
    this.alphabet = new Uint8Array(256);
    for (const key of sorted) for (const char of key) for (const b of encodingBytes(char)) this.alphabet[b] = 1;
    this.shortest = sorted.at(-1)?.length ?? MIN_KEY_LENGTH;
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
    // Most texts (a header, a message) have no stretch of the keys' alphabet as long as a key.
    if (!this.mayHold(text) && !this.base64?.mayHold(text)) return { text, count: 0 };
    const replacer = this.replacer();
    const head = replacer.push(Buffer.from(text, 'utf8'));
    const rest = replacer.end();
    if (replacer.count === 0) return { text, count: 0 };
    return { text: Buffer.concat([head, rest]).toString('utf8'), count: replacer.count };
  }

  /** Whether `text` has a run of characters of the alphabet (or NUL, of UTF-16) as long as the shortest key. */
  private mayHold(text: string): boolean {
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      run = c === 0 || (c < 256 && this.alphabet[c] === 1) ? run + 1 : 0;
      if (run >= this.shortest) return true;
    }
    return false;
  }

  /** Text with every key in it replaced. */
  redactText(text: string): string {
    return this.redact(text).text;
  }

  /** Where the keys are in `buf`, read as a whole text: [start, end) of each, in order. */
  ranges(buf: Buffer): [number, number][] {
    const found: [number, number][] = [];
    const { starts } = this;
    const text = buf.toString('latin1');
    starts.lastIndex = 0;
    for (let hit = starts.exec(text); hit !== null; hit = starts.exec(text)) {
      const end = this.matchAt(buf, hit.index, true);
      if (end === NO) {
        starts.lastIndex = hit.index + 1;
        continue;
      }
      found.push([hit.index, end]);
      starts.lastIndex = end;
    }
    return found;
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
  private found = 0;
  private tail: Buffer | undefined;
  /**
   * Then, in what this scan passes on, the keys' base64 (core/base64-keys.ts) and the keys written
   * in UTF-16 (core/wide-keys.ts).
   */
  private readonly base64: Base64KeyReplacer | undefined;
  private readonly wide: WideKeyReplacer;

  /**
   * First, the keys in a PNG's text chunks, which may be deflated (core/png-text-keys.ts): made
   * for a body that begins as a PNG does, `null` once the body is known not to be one.
   */
  private png: PngTextKeys | null | undefined;

  constructor(private readonly marker: SecretMarker) {
    this.base64 = marker.base64?.replacer();
    this.wide = new WideKeyReplacer(marker, KEY_MARKER);
  }

  get count(): number {
    return (this.png?.count ?? 0) + this.found + (this.base64?.count ?? 0) + this.wide.count;
  }

  push(chunk: Buffer): Buffer {
    if (this.png === undefined && chunk.length > 0) this.png = startsAsPng(chunk) ? this.pngStage() : null;
    const png = this.png ? this.png.push(chunk) : chunk;
    const buf = this.tail ? Buffer.concat([this.tail, png]) : png;
    this.tail = undefined;
    const scanned = this.scan(buf, false);
    return this.wide.push(this.base64 ? this.base64.push(scanned) : scanned);
  }

  end(): Buffer {
    const png = this.png ? this.png.end() : NOTHING;
    const buf = this.tail ? Buffer.concat([this.tail, png]) : png;
    this.tail = undefined;
    // Most bodies hold nothing back: one empty buffer for all of them, not one each.
    let rest = buf.length > 0 ? this.scan(buf, true) : NOTHING;
    if (this.base64) rest = joined(rest.length > 0 ? this.base64.push(rest) : NOTHING, this.base64.end());
    return joined(rest.length > 0 ? this.wide.push(rest) : NOTHING, this.wide.end());
  }

  private pngStage(): PngTextKeys {
    return new PngTextKeys((bytes) => {
      const replacer = this.marker.replacer();
      const out = joined(replacer.push(bytes), replacer.end());
      return { bytes: out, count: replacer.count };
    });
  }

  private scan(buf: Buffer, final: boolean): Buffer {
    const { alphabet, shortest, firsts } = this.marker;
    const n = buf.length;
    const found: Found = { parts: undefined, from: 0, held: n };
    // One look every `shortest` bytes: a key spans at least that many bytes of the alphabet.
    let probe = shortest - 1;
    let searched = 0;
    while (probe < n && found.held === n) {
      if (alphabet[buf[probe] as number] === 0) {
        probe += shortest;
        continue;
      }
      let start = probe;
      while (start > searched && alphabet[buf[start - 1] as number] === 1) start--;
      let end = probe + 1;
      while (end < n && alphabet[buf[end] as number] === 1) end++;
      // A run at the very end may go on in the next chunk, however short it is yet.
      if (end - start >= shortest || (end === n && !final)) this.searchRun(buf, start, end, final, found);
      // buf[end] is not in the alphabet: the next key starts after it.
      searched = end;
      probe = end + shortest;
    }
    // Nor is the end of a run at the very end left unsearched when no look fell in it.
    if (!final && found.held === n && searched < n && alphabet[buf[n - 1] as number] === 1) {
      let start = n - 1;
      while (start > searched && alphabet[buf[start - 1] as number] === 1) start--;
      this.searchRun(buf, start, n, final, found);
    }
    const { parts, from } = found;
    let held = found.held;
    // A last byte that may begin a match: its second byte comes with the next chunk.
    if (!final && held === n && n > from && firsts[buf[n - 1] as number] === 1) held = n - 1;
    // A copy: the chunk it is part of goes on to be kept by whoever reads this body.
    if (held < n) this.tail = Buffer.from(buf.subarray(held));
    if (!parts) return from === 0 && held === n ? buf : buf.subarray(from, held);
    parts.push(buf.subarray(from, held));
    return Buffer.concat(parts);
  }

  /**
   * Keys looked for where they may begin in buf[start, end), a run of alphabet bytes: each one
   * found is added to `found.parts`; where the bytes end too soon to tell, `found.held` says so.
   */
  private searchRun(buf: Buffer, start: number, end: number, final: boolean, found: Found): void {
    const { starts } = this.marker;
    const text = buf.toString('latin1', start, end);
    starts.lastIndex = Math.max(0, found.from - start);
    for (let hit = starts.exec(text); hit !== null; hit = starts.exec(text)) {
      const p = start + hit.index;
      const at = this.marker.matchAt(buf, p, final);
      if (at === MORE) {
        found.held = p;
        return;
      }
      if (at === NO) {
        starts.lastIndex = hit.index + 1;
        continue;
      }
      (found.parts ??= []).push(buf.subarray(found.from, p), MARKER_BYTES);
      this.found++;
      found.from = at;
      starts.lastIndex = at - start;
    }
  }
}

/** What one scan has found so far: the pieces to pass on, where the unsent bytes start, what is held back. */
interface Found {
  parts: Buffer[] | undefined;
  from: number;
  held: number;
}

/** Whether the first bytes of a body are those of a PNG's signature (all of them, or as many as came). */
function startsAsPng(chunk: Buffer): boolean {
  // Nearly every body is told apart by its first byte, without a call into Buffer.compare.
  if (chunk[0] !== PNG_SIGNATURE[0]) return false;
  const seen = Math.min(chunk.length, PNG_SIGNATURE.length);
  return chunk.compare(PNG_SIGNATURE, 0, seen, 0, seen) === 0;
}

/** Two pieces as one buffer, copied only when both hold bytes. */
function joined(a: Buffer, b: Buffer): Buffer {
  return b.length === 0 ? a : a.length === 0 ? b : Buffer.concat([a, b]);
}

function compileKey(key: string): CompiledKey {
  const chars = [...key];
  return {
    codes: chars.map((c) => c.charCodeAt(0)),
    names: chars.map(entityNames),
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
  const unit = encodedEnd(buf, i, code, key.names[k] as EntityName[], final);
  if (unit === MORE) return MORE;
  if (unit === NO) return literal;
  const escaped = keyEnd(buf, unit, key, k + 1, final);
  return escaped >= 0 || escaped === MORE ? escaped : literal;
}
