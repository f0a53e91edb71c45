/**
 * The run's keys written in base64 or base64url: a `data:` URI in a page, a field of JSON, a token
 * a service builds may hold the base64 of a text the key is part of, which no byte of the body
 * spells as the key.
 *
 * Base64 writes three bytes as four characters of six bits each. Where the key starts in a group
 * of three (0, 1 or 2 bytes in: its alignment) decides how it is written, and for each alignment
 * the characters that hold bits of the key alone are one fixed run, whatever surrounds it (53
 * characters of a 40-character key). Those six runs (three alignments, two alphabets) are what is
 * looked for, as they are and in UTF-16; and those of the key's UTF-16 text, either byte order (the
 * base64 of a .NET string's bytes, of a PowerShell -EncodedCommand). A run is replaced by the same
 * run of a filler text (see `fillerOf`), and the character either side of it, which holds a few
 * bits of the key beside bits of its neighbours, has those bits set to the filler's: a decoder then
 * reads the text around the key exactly as it was and the filler in the key's place, and the body
 * keeps its length and alphabet, so a `data:` URI or a JSON string stays well formed.
 *
 * The scan runs over every body, so like the byte scan of core/secret-marker.ts it passes over
 * most bytes of a chunk unread: a run is a stretch, at least as long as the shortest run, of the
 * characters the runs are spelt with (and zeros, in UTF-16), so a window that long is read from
 * its end back to the first byte of none of them, and moved on past it. Text has no stretch that
 * long but base64 itself (a word, a path, a class name are shorter), nor have random bytes; only
 * from the first such stretch on is the chunk searched, each run with a native Buffer.indexOf.
 *
 * A body may also come a few bytes at a time, and what is held back at the end of each piece (what
 * may begin a run) must not be searched again with every piece, or a body of a run's first
 * character, one byte a piece, costs a search of every run a byte. Small pieces are read byte by
 * byte through one automaton of all the runs (core/run-automaton.ts), which goes on from where the piece
 * before left it: a few steps a piece, whatever is held back.
 */

import { RunAutomaton } from './run-automaton.js';

/**
 * A run of fewer characters is not looked for. Each character carries six bits of the key: eight
 * are 48 bits, which random base64 (an image in a `data:` URI) matches by chance once in 2^48
 * places, never in an export. The four to six that the base64 of a four- or five-character key
 * holds would be met by chance once in every few megabytes to gigabytes of images, and a byte of
 * one changed. A key of the service's, 40 characters, has runs of 52 and 53.
 */
const MIN_RUN = 8;
const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = `${STANDARD.slice(0, 62)}-_`;
const NOTHING = Buffer.alloc(0);
const NONE: readonly Hit[] = [];

/** Each byte's six bits in either alphabet, -1 for a byte of neither. */
const SEXTETS = new Int8Array(256).fill(-1);
for (const alphabet of [STANDARD, URL_SAFE]) for (let v = 0; v < 64; v++) SEXTETS[alphabet.charCodeAt(v)] = v;

/** One run of one key: an alignment, an alphabet, a width. */
interface Form {
  /** The run as the body spells it: one byte a character, or two (UTF-16). */
  bytes: Buffer;
  /** The filler's run, as long. */
  replacement: Buffer;
  width: 1 | 2;
  bigEndian: boolean;
  /** The alphabet, to write a character whose bits are set in. */
  chars: string;
  /** How many bits of the key the character before the run ends with, and the one after begins with. */
  before: number;
  after: number;
  /** The filler's characters at those places: their bits are the filler's where the key's were. */
  fillBefore: number;
  fillAfter: number;
  /** The key's bits in the character before: what every character that may stand there ends with. */
  keyBefore: number;
}

interface Hit {
  at: number;
  form: Form;
}

/**
 * The filler for a key of `length` bytes: the marker repeated, ending as the marker ends. A decoder
 * reads the marker where the key was, as in a body's text; it is printable, so a decoded JSON or
 * text stays well formed. Its bytes are ASCII letters and a hyphen, with never six 1-bits in a row,
 * and it ends with `Y` (its last two bits 01): no character written from it, the run or the bits
 * set either side, is one of the two (62, 63) the alphabets spell differently, so the one
 * replacement is right in both, even where the two runs of an alignment are the same characters.
 */
function fillerOf(length: number, markerText: string): Buffer {
  const repeated = markerText.repeat(Math.ceil(length / markerText.length));
  return Buffer.from(repeated.slice(repeated.length - length), 'latin1');
}

/**
 * The bytes a key may be encoded from, each with the filler's as long: its own (one byte a
 * character), and its UTF-16 in either byte order (the base64 of a .NET string's bytes, of a
 * PowerShell -EncodedCommand), whose filler is the filler's UTF-16, read as the marker again.
 */
function keyTexts(key: string, markerText: string): [Buffer, Buffer][] {
  const filler = fillerOf(key.length, markerText).toString('latin1');
  const le = (text: string): Buffer => Buffer.from(text, 'utf16le');
  return [
    [Buffer.from(key, 'latin1'), Buffer.from(filler, 'latin1')],
    [le(key), le(filler)],
    [le(key).swap16(), le(filler).swap16()],
  ];
}

/** The runs of a key's bytes, narrow: each alignment in each alphabet, those of MIN_RUN characters or more. */
function narrowForms(key: Buffer, filler: Buffer): Form[] {
  const forms: Form[] = [];
  for (const [encoding, chars] of [
    ['base64', STANDARD],
    ['base64url', URL_SAFE],
  ] as const) {
    for (let a = 0; a < 3; a++) {
      const lead = Buffer.alloc(a);
      const encoded = Buffer.concat([lead, key]).toString(encoding);
      const filled = Buffer.concat([lead, filler]).toString(encoding);
      const start = Math.ceil((8 * a) / 6);
      const end = Math.floor((8 * (a + key.length)) / 6);
      if (end - start < MIN_RUN) continue;
      const before = (6 - ((8 * a) % 6)) % 6;
      const after = (8 * (a + key.length)) % 6;
      forms.push({
        bytes: Buffer.from(encoded.slice(start, end), 'latin1'),
        replacement: Buffer.from(filled.slice(start, end), 'latin1'),
        width: 1,
        bigEndian: false,
        chars,
        before,
        after,
        fillBefore: before > 0 ? (SEXTETS[filled.charCodeAt(start - 1)] as number) : 0,
        fillAfter: after > 0 ? (SEXTETS[filled.charCodeAt(end)] as number) : 0,
        keyBefore: before > 0 ? (SEXTETS[encoded.charCodeAt(start - 1)] as number) & ((1 << before) - 1) : 0,
      });
    }
  }
  return forms;
}

/** A narrow form as UTF-16 in the given byte order. */
function wideForm(form: Form, bigEndian: boolean): Form {
  const wide = (bytes: Buffer): Buffer => {
    const le = Buffer.from(bytes.toString('latin1'), 'utf16le');
    return bigEndian ? le.swap16() : le;
  };
  return { ...form, bytes: wide(form.bytes), replacement: wide(form.replacement), width: 2, bigEndian };
}

/**
 * A chunk of at most so many bytes is read byte by byte through the runs' automaton (core/run-automaton.ts),
 * from where the one before left off; a longer one is searched natively (`find`). A body that
 * arrives a few bytes at a time then costs a few steps a piece, whatever is held back.
 */
const STEP_MOST = 512;

/**
 * Once a replacer holds bytes back, the small pieces after them are kept with them until at least
 * so many may be let go of (see `Base64KeyReplacer.push`).
 */
const RELEASE_LEAST = 256;

/**
 * The characters that may stand before a run, as the body spells them: their last bits are the
 * key's. One that ends a piece is held back: should a run begin the next, its bits are set then.
 */
function beforeChars(forms: readonly Form[]): Map<string, Buffer> {
  const befores = new Map<string, Buffer>();
  for (const form of forms) {
    if (form.before === 0) continue;
    for (let v = 0; v < 64; v++) {
      if ((v & ((1 << form.before) - 1)) !== form.keyBefore) continue;
      const c = form.chars.charCodeAt(v);
      const bytes = Buffer.from(form.width === 1 ? [c] : form.bigEndian ? [0, c] : [c, 0]);
      befores.set(bytes.toString('latin1'), bytes);
    }
  }
  return befores;
}

/** The base64 runs of a run's keys, ready to be looked for: made once for all its bodies. */
export class Base64Keys {
  /**
   * The most bytes a replacer holds back: the longest run and a character either side, and the
   * small pieces kept with them until there are enough to let go of.
   */
  readonly holdMost: number;
  readonly automaton: RunAutomaton<Form>;
  readonly longest: number;
  private readonly forms: Form[];
  /** Bytes of the shortest run: one look in every so many. */
  private readonly shortest: number;
  /**
   * 1 for each byte some run is spelt with: of a hex key's, 38 characters of the 64 (and the zero
   * of UTF-16), so that most words of a text are not a stretch of them at all.
   */
  private readonly runBytes = new Uint8Array(256);
  private readonly texts: string[];

  private constructor(forms: Form[]) {
    this.forms = forms.sort((a, b) => b.bytes.length - a.bytes.length);
    for (const form of forms) for (const b of form.bytes) this.runBytes[b] = 1;
    this.shortest = Math.min(...forms.map((form) => form.bytes.length));
    this.longest = (forms[0] as Form).bytes.length;
    this.holdMost = this.longest + 4 + RELEASE_LEAST;
    this.texts = forms.map((form) => form.bytes.toString('latin1'));
    this.automaton = new RunAutomaton(forms, [...beforeChars(forms).values()]);
  }

  /** Undefined when no key is long enough to have a run worth looking for. */
  static of(keys: readonly string[], markerText: string): Base64Keys | undefined {
    const seen = new Map<string, Form>();
    for (const key of keys) {
      for (const [k, [bytes, filler]] of keyTexts(key, markerText).entries()) {
        for (const form of narrowForms(bytes, filler)) {
          // The base64 of the key's own bytes may itself be written in UTF-16 text; that of its
          // UTF-16 is looked for as it is.
          const each = k === 0 ? [form, wideForm(form, false), wideForm(form, true)] : [form];
          // Where a run has none of the characters the alphabets differ in, the two are one.
          for (const one of each)
            if (!seen.has(one.bytes.toString('latin1'))) seen.set(one.bytes.toString('latin1'), one);
        }
      }
    }
    return seen.size === 0 ? undefined : new Base64Keys([...seen.values()]);
  }

  replacer(): Base64KeyReplacer {
    return new Base64KeyReplacer(this);
  }

  /** Whether `text` holds a run (a message, a header: few are long enough to search). */
  mayHold(text: string): boolean {
    return this.texts.some((run) => text.includes(run));
  }

  /** Every run in `buf`, in order: none unless it has a stretch of run bytes as long as the shortest run. */
  find(buf: Buffer): readonly Hit[] {
    const { shortest, runBytes } = this;
    const n = buf.length;
    // A window of the shortest run's length, read from its end back to a byte no run is spelt with,
    // then moved on to end a shortest run past that byte; what was read of it before is not read again.
    let end = shortest - 1;
    let known = -1;
    while (end < n) {
      const start = end - shortest + 1;
      const stop = Math.max(start, known + 1);
      let at = end;
      while (at >= stop && runBytes[buf[at] as number] === 1) at--;
      // The first stretch long enough: the rest of the chunk is searched natively, however long.
      if (at < stop) return this.searchFrom(buf, start);
      known = end;
      end = at + shortest;
    }
    return NONE;
  }

  private searchFrom(buf: Buffer, start: number): Hit[] {
    const wide = buf.indexOf(0, start) !== -1;
    const hits: Hit[] = [];
    for (const form of this.forms) {
      if (form.width === 2 && !wide) continue;
      for (let at = buf.indexOf(form.bytes, start); at !== -1; at = buf.indexOf(form.bytes, at + 1))
        hits.push({ at, form });
    }
    return hits.sort(byPlace);
  }
}

/** Hits in the order they are replaced: by where they begin, the longer first. */
function byPlace(a: Hit, b: Hit): number {
  return a.at - b.at || b.form.bytes.length - a.form.bytes.length;
}

/**
 * Whose bytes a replacer settles: the caller's chunk (copied before a byte is written), a copy of
 * its own (written in), or its store (written in; what is let go of is copied out of it).
 */
type Owner = 'caller' | 'copy' | 'store';

/** One body's bytes with the keys' base64 runs replaced, chunk by chunk, as KeyReplacer does the rest. */
export class Base64KeyReplacer {
  count = 0;
  /**
   * What is held back, store[0, length): a run, or what may begin one, with the character before
   * it; and, once something is held, the small pieces after it until there are enough to let go.
   */
  private store = NOTHING;
  private length = 0;
  /** The automaton's state after the last byte pushed (its row). */
  private row = 0;
  /** The runs found in what is held back and not replaced yet, `at` in it. */
  private pending: Hit[] = [];

  constructor(private readonly keys: Base64Keys) {}

  push(chunk: Buffer): Buffer {
    if (chunk.length === 0) return chunk;
    const { automaton } = this.keys;
    if (chunk.length > STEP_MOST) {
      const held = this.length > 0;
      const buf = held ? Buffer.concat([this.store.subarray(0, this.length), chunk]) : chunk;
      this.row = automaton.stateAfter(buf, this.keys.longest);
      // The runs found before and held back are found again with the rest.
      this.pending = [];
      return this.settle(buf, this.keys.find(buf), automaton.holdAt(this.row), held ? 'copy' : 'caller');
    }
    const { next, column, found } = automaton;
    const from = this.length;
    let row = this.row;
    for (let i = 0; i < chunk.length; i++) {
      row = next[row + (column[chunk[i] as number] as number)] as number;
      if (found[row] === 1)
        for (const form of automaton.endsAt(row)) this.pending.push({ at: from + i + 1 - form.bytes.length, form });
    }
    this.row = row;
    const hold = automaton.holdAt(row);
    if (from === 0) {
      // Most pieces of most bodies: nothing found, nothing held before or now.
      if (hold === 0 && this.pending.length === 0) return chunk;
      return this.settle(chunk, this.takePending(), hold, 'caller');
    }
    this.keep(chunk);
    // Once something is held, small pieces are let go of some hundred bytes at a time: a body that
    // comes a byte at a time, every byte a run's first, is not copied out a byte at a time.
    if (this.length - hold < RELEASE_LEAST) return NOTHING;
    return this.settle(this.store.subarray(0, this.length), this.takePending(), hold, 'store');
  }

  end(): Buffer {
    this.row = 0;
    if (this.length === 0) return NOTHING;
    return this.settle(this.store.subarray(0, this.length), this.takePending(), 0, 'store', true);
  }

  /** `bytes` added to what is held back. */
  private keep(bytes: Buffer): void {
    // Never more than held back and a piece; most bodies hold back a byte or two, at their end.
    if (this.store.length < this.length + bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.store.length, 64, this.length + bytes.length));
      this.store.copy(grown, 0, 0, this.length);
      this.store = grown;
    }
    // A few bytes are copied faster by hand than by a call into the runtime.
    if (bytes.length > 32) this.store.set(bytes, this.length);
    else for (let i = 0; i < bytes.length; i++) this.store[this.length + i] = bytes[i] as number;
    this.length += bytes.length;
  }

  private takePending(): Hit[] {
    const hits = this.pending.length > 1 ? this.pending.sort(byPlace) : this.pending;
    this.pending = [];
    return hits;
  }

  /**
   * `buf` (what was held back and the new chunk) with the runs `hits` replaced, less what is held
   * back now: the last `hold` bytes, and a run whose character after has not come, from its
   * character before.
   */
  private settle(buf: Buffer, hits: readonly Hit[], hold: number, owner: Owner, final = false): Buffer {
    const n = buf.length;
    let held = n - hold;
    if (!final)
      for (const { at, form } of hits)
        if (form.after > 0 && at + form.bytes.length + form.width > n) held = Math.min(held, at - form.width);
    held = Math.max(0, held);
    let out = buf;
    for (const { at, form } of hits) {
      // A run whose character before is held back is replaced with it, when the next chunk comes.
      if (!final && Math.max(0, at - form.width) >= held) {
        this.pending.push({ at: at - held, form });
        continue;
      }
      const end = at + form.bytes.length;
      // A copy, made once: the chunk is the caller's.
      if (out === buf && owner === 'caller') out = Buffer.from(buf);
      // Where one run overlaps one replaced before it, it is gone.
      if (out.compare(form.bytes, 0, form.bytes.length, at, end) !== 0) continue;
      form.replacement.copy(out, at);
      if (form.before > 0) setBits(out, at - form.width, form, (1 << form.before) - 1, form.fillBefore);
      if (form.after > 0) setBits(out, end, form, 0x3f ^ ((1 << (6 - form.after)) - 1), form.fillAfter);
      this.count++;
    }
    // The store is written over next: what leaves it is a copy.
    const given =
      held === 0
        ? NOTHING
        : owner === 'store'
          ? Buffer.from(out.subarray(0, held))
          : held === n
            ? out
            : out.subarray(0, held);
    this.length = 0;
    // Within the store, the bytes move to its start (Buffer#copy allows the overlap).
    if (held < n) this.keep(out.subarray(held));
    return given;
  }
}

/**
 * The bits `mask` of the character at `at` set to those of `fill`, where the body has a character
 * of either alphabet there (it may end before, or have `=` or a quote).
 */
function setBits(buf: Buffer, at: number, form: Form, mask: number, fill: number): void {
  if (at < 0 || at + form.width > buf.length) return;
  const low = form.width === 2 && form.bigEndian ? at + 1 : at;
  if (form.width === 2 && buf[form.bigEndian ? at : at + 1] !== 0) return;
  const value = SEXTETS[buf[low] as number] as number;
  if (value === -1) return;
  buf[low] = form.chars.charCodeAt((value & ~mask) | (fill & mask));
}
