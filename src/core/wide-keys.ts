/**
 * The run's keys written in UTF-16, either byte order, with or without a byte order mark: a body
 * a service sends as UTF-16 (a page, an export of its own) spells a key with a zero byte beside
 * each of its characters, which the byte scan of core/secret-marker.ts never sees as a key.
 *
 * Such text is a run of bytes that are either zero or of the keys' alphabet, as long as twice the
 * shortest key; the scan looks at one byte in every such length, as the byte scan does, and
 * passes over the rest unread. In a run that holds a zero, each way of pairing its bytes (the
 * zero second or first, from either of the first two bytes) gives a text of one byte a character,
 * which the byte scan's matcher reads (every encoding it knows, mixed); each key found is replaced
 * by the marker in the same byte order, so the body stays UTF-16.
 */
import type { SecretMarker } from './secret-marker.js';

const NOTHING = Buffer.alloc(0);

/** What the wide scan of one set of keys needs, made once for all the bodies of a run. */
interface WideTables {
  /** The keys' alphabet and the zero byte. */
  wide: Uint8Array;
  /** The marker as UTF-16: little-endian, then big-endian. */
  marks: [Buffer, Buffer];
}
const tables = new WeakMap<SecretMarker, WideTables>();

function tablesOf(marker: SecretMarker, markerText: string): WideTables {
  let made = tables.get(marker);
  if (!made) {
    const wide = new Uint8Array(marker.alphabet);
    wide[0] = 1;
    const le = Buffer.from(markerText, 'utf16le');
    tables.set(marker, (made = { wide, marks: [le, Buffer.from(le).swap16()] }));
  }
  return made;
}

/** One body's bytes with its UTF-16 keys replaced, chunk by chunk, as KeyReplacer does the rest. */
export class WideKeyReplacer {
  count = 0;
  private tail: Buffer | undefined;
  private readonly wide: Uint8Array;
  private readonly marks: [Buffer, Buffer];

  constructor(
    private readonly marker: SecretMarker,
    markerText: string,
  ) {
    ({ wide: this.wide, marks: this.marks } = tablesOf(marker, markerText));
  }

  push(chunk: Buffer): Buffer {
    const buf = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    this.tail = undefined;
    return this.scan(buf, false);
  }

  end(): Buffer {
    const buf = this.tail;
    this.tail = undefined;
    return buf ? this.scan(buf, true) : NOTHING;
  }

  private scan(buf: Buffer, final: boolean): Buffer {
    const { wide } = this;
    const n = buf.length;
    const shortest = 2 * this.marker.shortest;
    const window = 2 * this.marker.span;
    // What may be the start of UTF-16 text still coming waits for the next chunk.
    let limit = n;
    if (!final) {
      while (limit > 0 && n - limit < window && wide[buf[limit - 1] as number] === 1) limit--;
      // Without a zero in it, the run can begin UTF-16 text only at its last byte, and a key only
      // at a byte a key's encodings begin with: most bodies hold nothing back.
      const zero = buf.indexOf(0, limit);
      if (zero === -1) limit = limit < n && this.marker.firsts[buf[n - 1] as number] === 1 ? n - 1 : n;
    }
    const found: Found[] = [];
    let probe = shortest - 1;
    let searched = 0;
    while (probe < n) {
      if (wide[buf[probe] as number] === 0) {
        probe += shortest;
        continue;
      }
      let start = probe;
      while (start > searched && wide[buf[start - 1] as number] === 1) start--;
      let end = probe + 1;
      while (end < n && wide[buf[end] as number] === 1) end++;
      if (end - start >= shortest && start < limit) {
        const zero = buf.indexOf(0, start);
        if (zero !== -1 && zero < end) this.searchRun(buf, start, end, limit, found);
      }
      searched = end;
      probe = end + shortest;
    }
    return this.replaced(buf, found, final ? n : limit);
  }

  /** Keys in buf[start, end), read two bytes a character each of the four ways; those starting before `limit` kept. */
  private searchRun(buf: Buffer, start: number, end: number, limit: number, found: Found[]): void {
    for (const bigEndian of [false, true]) {
      for (let from = start; from < start + 2; from++) {
        let i = from;
        while (i + 1 < end) {
          // The longest stretch from i of characters whose high byte is zero.
          let j = i;
          while (j + 1 < end && isNarrow(buf, j, bigEndian, this.marker.alphabet)) j += 2;
          if ((j - i) / 2 >= this.marker.shortest) this.searchText(buf, i, j, bigEndian, limit, found);
          i = j + 2;
        }
      }
    }
  }

  private searchText(buf: Buffer, start: number, end: number, bigEndian: boolean, limit: number, found: Found[]) {
    const text = Buffer.allocUnsafe((end - start) / 2);
    for (let k = 0; k < text.length; k++) text[k] = buf[start + 2 * k + (bigEndian ? 1 : 0)] as number;
    for (const [from, to] of this.marker.ranges(text)) {
      const at = start + 2 * from;
      if (at < limit) found.push({ start: at, end: start + 2 * to, bigEndian });
    }
  }

  /** buf with the keys found replaced, up to `keep`; what is after it (or after a key that runs past it) held back. */
  private replaced(buf: Buffer, found: Found[], keep: number): Buffer {
    if (found.length === 0) {
      if (keep < buf.length) this.tail = Buffer.from(buf.subarray(keep));
      return keep === buf.length ? buf : buf.subarray(0, keep);
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const parts: Buffer[] = [];
    let from = 0;
    for (const key of found) {
      if (key.start < from) continue;
      parts.push(buf.subarray(from, key.start), this.marks[key.bigEndian ? 1 : 0]);
      this.count++;
      from = key.end;
    }
    const held = Math.max(from, keep);
    parts.push(buf.subarray(from, held));
    if (held < buf.length) this.tail = Buffer.from(buf.subarray(held));
    return Buffer.concat(parts);
  }
}

interface Found {
  start: number;
  end: number;
  bigEndian: boolean;
}

/** Whether buf[j, j+2) is a character of the alphabet with a zero high byte, in the given byte order. */
function isNarrow(buf: Buffer, j: number, bigEndian: boolean, alphabet: Uint8Array): boolean {
  const high = buf[bigEndian ? j : j + 1] as number;
  const low = buf[bigEndian ? j + 1 : j] as number;
  return high === 0 && low !== 0 && alphabet[low] === 1;
}
