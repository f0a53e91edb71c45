/**
 * The run's API keys found and replaced in bytes and text, in the encodings a service or a page
 * may write them in (core/char-encodings.ts: as is, percent-encoded, JSON, JavaScript and CSS
 * escapes, HTML character references), each character of a key in any of them, mixed. Every
 * occurrence is replaced by KEY_MARKER.
 *
 * Bytes stream through `KeyReplacer` as they arrive: what could still be the start of a key at the
 * end of one chunk is held back until the next (at most a key's length of its longest encoding),
 * so memory is flat however large the body. A place is tried only where its first two bytes can
 * begin a key in one of the encodings, found by one regular expression, so a body without a key
 * costs one native pass over its bytes and little else.
 */
import {
  AMPERSAND,
  BACKSLASH,
  encodedEnd,
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
