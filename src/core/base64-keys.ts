/**
 * The run's keys written in base64 or base64url: a `data:` URI in a page, a field of JSON, a token
 * a service builds may hold the base64 of a text the key is part of, which no byte of the body
 * spells as the key.
 *
 * Base64 writes three bytes as four characters of six bits each. Where the key starts in a group
 * of three (0, 1 or 2 bytes in: its alignment) decides how it is written, and for each alignment
 * the characters that hold bits of the key alone are one fixed run, whatever surrounds it (53
 * characters of a 40-character key). Those six runs (three alignments, two alphabets) are what is
 * looked for, as they are and in UTF-16. A run is replaced by the same run of a filler text (see
 * `fillerOf`), and the character either side of it, which holds a few bits of the key beside bits
 * of its neighbours, has those bits set to the filler's: a decoder then reads the text around the
 * key exactly as it was and the filler in the key's place, and the body keeps its length and
 * alphabet, so a `data:` URI or a JSON string stays well formed.
 *
 * The scan runs over every body, so like the byte scan of core/secret-marker.ts it passes over
 * most bytes unread: a run is a stretch, at least as long as the shortest run, of the characters
 * the runs are spelt with (and zeros, in UTF-16), so a window that long is read from its end back
 * to the first byte of none of them, and moved on past it. Text has no stretch that long but
 * base64 itself (a word, a path, a class name are shorter), nor have random bytes; only from the
 * first such stretch on is the chunk searched, each run with a native Buffer.indexOf.
 */

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

/** A key's runs, narrow: each alignment in each alphabet, those of MIN_RUN characters or more. */
function narrowForms(key: Buffer, markerText: string): Form[] {
  const filler = fillerOf(key.length, markerText);
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

/** The base64 runs of a run's keys, ready to be looked for: made once for all its bodies. */
export class Base64Keys {
  /** The most bytes a replacer holds back: the longest run and a character either side. */
  readonly holdMost: number;
  private readonly forms: Form[];
  /** Bytes of the shortest run: one look in every so many. */
  private readonly shortest: number;
  private readonly longest: number;
  /** The bytes a run's spelling begins with. */
  private readonly firsts = new Uint8Array(256);
  /**
   * 1 for each byte some run is spelt with: of a hex key's, 38 characters of the 64 (and the zero
   * of UTF-16), so that most words of a text are not a stretch of them at all.
   */
  private readonly runBytes = new Uint8Array(256);
  private readonly texts: string[];

  private constructor(forms: Form[]) {
    this.forms = forms.sort((a, b) => b.bytes.length - a.bytes.length);
    for (const form of forms) {
      this.firsts[form.bytes[0] as number] = 1;
      for (const b of form.bytes) this.runBytes[b] = 1;
    }
    this.shortest = Math.min(...forms.map((form) => form.bytes.length));
    this.longest = (forms[0] as Form).bytes.length;
    this.holdMost = this.longest + 4;
    this.texts = forms.map((form) => form.bytes.toString('latin1'));
  }

  /** Undefined when no key is long enough to have a run worth looking for. */
  static of(keys: readonly string[], markerText: string): Base64Keys | undefined {
    const seen = new Map<string, Form>();
    for (const key of keys) {
      for (const form of narrowForms(Buffer.from(key, 'utf8'), markerText)) {
        // Where a run has none of the characters the alphabets differ in, the two are one.
        for (const each of [form, wideForm(form, false), wideForm(form, true)])
          if (!seen.has(each.bytes.toString('latin1'))) seen.set(each.bytes.toString('latin1'), each);
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
    return hits.sort((a, b) => a.at - b.at || b.form.bytes.length - a.form.bytes.length);
  }

  /**
   * Where the bytes still undecided at the end of a chunk begin: a run whose character after has
   * not come, or the start of one that may go on in the next chunk, each with the character before
   * it, which is rewritten with it.
   */
  heldFrom(buf: Buffer, hits: readonly Hit[]): number {
    const n = buf.length;
    let held = n;
    for (const { at, form } of hits)
      if (form.after > 0 && at + form.bytes.length + form.width > n) held = Math.min(held, at - form.width);
    let i = n;
    while (i > 0 && n - i < this.longest && this.runBytes[buf[i - 1] as number] === 1) i--;
    for (; i < n; i++) {
      if (this.firsts[buf[i] as number] === 0) continue;
      const form = this.forms.find((f) => n - i < f.bytes.length && buf.compare(f.bytes, 0, n - i, i, n) === 0);
      if (form) {
        held = Math.min(held, i - form.width);
        break;
      }
    }
    return Math.max(0, held);
  }
}

/** One body's bytes with the keys' base64 runs replaced, chunk by chunk, as KeyReplacer does the rest. */
export class Base64KeyReplacer {
  count = 0;
  private tail: Buffer | undefined;

  constructor(private readonly keys: Base64Keys) {}

  push(chunk: Buffer): Buffer {
    const buf = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    this.tail = undefined;
    return buf.length === 0 ? buf : this.scan(buf, false);
  }

  end(): Buffer {
    const buf = this.tail;
    this.tail = undefined;
    return buf ? this.scan(buf, true) : NOTHING;
  }

  private scan(buf: Buffer, final: boolean): Buffer {
    const n = buf.length;
    const hits = this.keys.find(buf);
    const held = final ? n : this.keys.heldFrom(buf, hits);
    let out = buf;
    for (const { at, form } of hits) {
      // A run whose character before is held back is replaced with it, when the next chunk comes.
      if (at - form.width >= held) continue;
      const end = at + form.bytes.length;
      // A copy, made once: the chunk is the caller's.
      if (out === buf) out = Buffer.from(buf);
      // Where one run overlaps one replaced before it, it is gone.
      if (out.compare(form.bytes, 0, form.bytes.length, at, end) !== 0) continue;
      form.replacement.copy(out, at);
      if (form.before > 0) setBits(out, at - form.width, form, (1 << form.before) - 1, form.fillBefore);
      if (form.after > 0) setBits(out, end, form, 0x3f ^ ((1 << (6 - form.after)) - 1), form.fillAfter);
      this.count++;
    }
    if (held < n) this.tail = Buffer.from(out.subarray(held));
    return held === n ? out : out.subarray(0, held);
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
