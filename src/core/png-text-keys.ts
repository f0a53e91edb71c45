/**
 * The run's keys in a PNG's text chunks. A zTXt chunk, and an iTXt chunk with its compression flag
 * set, hold their text deflated: a key in it is in no byte of the body, and every reader of the
 * image inflates it. The byte scan (core/secret-marker.ts) replaces keys where it sees them, which
 * in a tEXt or iTXt chunk would leave the chunk's length and CRC wrong.
 *
 * So a body that begins with the PNG signature is read chunk by chunk as it streams: the text
 * chunks (each held whole, up to MAX_TEXT_CHUNK) are read field by field, their text inflated
 * (up to MAX_INFLATED), every key replaced by the marker, deflated again where it was, and the
 * chunk written back with its new length and CRC; a chunk without a key is kept byte for byte, as
 * is every other chunk. A text chunk that cannot be read (its text does not inflate, or is larger
 * than the caps) is left out of the body: what cannot be looked at is not kept, and a text chunk
 * is ancillary, so the image stays a valid PNG.
 */
import { crc32, deflateSync, inflateSync } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The largest text chunk held whole to be read; a larger one is left out. */
const MAX_TEXT_CHUNK = 4 * 1024 * 1024;
/** The most bytes the text of one chunk may inflate to before it is left out. */
const MAX_INFLATED = 32 * 1024 * 1024;
/** Chunks holding text or a compressed payload a key could be hidden in (iCCP: a colour profile, laid out as zTXt). */
const TEXT_TYPES = new Set(['tEXt', 'zTXt', 'iTXt', 'iCCP']);
const NOTHING = Buffer.alloc(0);

/** The text scan of a field: its bytes with the keys replaced, and how many there were. */
export type RedactBytes = (bytes: Buffer) => { bytes: Buffer; count: number };

type Mode = 'signature' | 'header' | 'pass' | 'skip' | 'other';

/** One body's bytes with the keys in its PNG text chunks replaced, chunk by chunk. */
export class PngTextKeys {
  count = 0;
  private mode: Mode = 'signature';
  private pending: Buffer | undefined;
  /** Bytes of the current chunk still to pass on ('pass') or leave out ('skip'). */
  private left = 0;
  private afterEnd = false;

  constructor(private readonly redact: RedactBytes) {}

  /** Pieces of a text chunk still coming, and how many bytes the whole chunk has: joined once, when all are here. */
  private gathering: Buffer[] = [];
  private gathered = 0;
  private wanted = 0;

  push(chunk: Buffer): Buffer {
    if (this.mode === 'other' && !this.pending) return chunk;
    if (this.wanted > 0 && this.gathered + chunk.length < this.wanted) {
      this.gathering.push(chunk);
      this.gathered += chunk.length;
      return NOTHING;
    }
    const buf = this.pending ? Buffer.concat([this.pending, ...this.gathering, chunk]) : chunk;
    this.pending = undefined;
    this.gathering = [];
    this.gathered = 0;
    this.wanted = 0;
    const out: Buffer[] = [];
    // While nothing is rewritten or left out, what goes on is one stretch of buf, passed as a view.
    let whole = true;
    let i = 0;
    while (i < buf.length) {
      const rest = buf.length - i;
      if (this.mode === 'other') {
        out.push(buf.subarray(i));
        break;
      }
      if (this.mode === 'signature') {
        const seen = Math.min(rest, PNG_SIGNATURE.length);
        if (buf.compare(PNG_SIGNATURE, 0, seen, i, i + seen) !== 0) this.mode = 'other';
        else if (seen < PNG_SIGNATURE.length) {
          this.pending = Buffer.from(buf.subarray(i));
          break;
        } else {
          out.push(buf.subarray(i, i + seen));
          i += seen;
          this.mode = 'header';
        }
        continue;
      }
      if (this.mode === 'pass' || this.mode === 'skip') {
        const take = Math.min(rest, this.left);
        if (this.mode === 'pass') out.push(buf.subarray(i, i + take));
        else whole = false;
        i += take;
        this.left -= take;
        if (this.left === 0) this.mode = this.afterEnd ? 'other' : 'header';
        continue;
      }
      // At a chunk's header: its length and type.
      if (rest < 8) {
        this.pending = Buffer.from(buf.subarray(i));
        break;
      }
      const length = buf.readUInt32BE(i);
      const type = buf.toString('latin1', i + 4, i + 8);
      const size = length + 12;
      this.afterEnd = type === 'IEND';
      if (!TEXT_TYPES.has(type)) {
        this.mode = 'pass';
        this.left = size;
        continue;
      }
      if (length > MAX_TEXT_CHUNK) {
        this.count++;
        this.mode = 'skip';
        this.left = size;
        continue;
      }
      if (rest < size) {
        this.pending = Buffer.from(buf.subarray(i));
        this.gathered = this.pending.length;
        this.wanted = size;
        break;
      }
      const original = buf.subarray(i, i + size);
      const kept = this.textChunk(original, type);
      if (kept) out.push(kept);
      if (kept !== original) whole = false;
      i += size;
    }
    if (!whole) return Buffer.concat(out);
    const end = buf.length - (this.pending?.length ?? 0);
    return end === buf.length ? buf : buf.subarray(0, end);
  }

  /** What is held back: a body that ends inside a chunk (or the signature) ends so. */
  end(): Buffer {
    const rest = this.pending ? Buffer.concat([this.pending, ...this.gathering]) : NOTHING;
    this.pending = undefined;
    this.gathering = [];
    this.mode = 'other';
    return rest;
  }

  /** The chunk as kept: itself, rewritten with its keys replaced, or undefined when it is left out. */
  private textChunk(chunk: Buffer, type: string): Buffer | undefined {
    const data = chunk.subarray(8, chunk.length - 4);
    let fields: Buffer[] | undefined;
    try {
      fields =
        type === 'tEXt'
          ? plainText(data)
          : type === 'zTXt' || type === 'iCCP'
            ? compressedText(data)
            : internationalText(data);
    } catch {
      fields = undefined;
    }
    if (!fields) {
      this.count++;
      return undefined;
    }
    let found = 0;
    const redacted = fields.map((field) => {
      const result = this.redact(field);
      found += result.count;
      return result.bytes;
    });
    if (found === 0) return chunk;
    this.count += found;
    return writeChunk(type, rebuild(type, data, redacted));
  }
}

/** tEXt: keyword, NUL, text. */
function plainText(data: Buffer): Buffer[] {
  const nul = data.indexOf(0);
  if (nul < 0) throw new Error('tEXt without a keyword');
  return [data.subarray(0, nul), data.subarray(nul + 1)];
}

/** zTXt (and iCCP, whose profile is laid out alike): keyword, NUL, compression method (0), deflated text. */
function compressedText(data: Buffer): Buffer[] {
  const nul = data.indexOf(0);
  if (nul < 0 || data[nul + 1] !== 0) throw new Error('zTXt without a keyword or of an unknown method');
  return [data.subarray(0, nul), inflate(data.subarray(nul + 2))];
}

/** iTXt: keyword, NUL, compression flag, method, language tag, NUL, translated keyword, NUL, text. */
function internationalText(data: Buffer): Buffer[] {
  const nul = data.indexOf(0);
  if (nul < 0) throw new Error('iTXt without a keyword');
  const flag = data[nul + 1];
  const language = data.indexOf(0, nul + 3);
  const translated = language < 0 ? -1 : data.indexOf(0, language + 1);
  if (translated < 0 || (flag !== 0 && flag !== 1) || (flag === 1 && data[nul + 2] !== 0))
    throw new Error('iTXt of an unknown layout');
  const text = data.subarray(translated + 1);
  return [
    data.subarray(0, nul),
    data.subarray(nul + 3, language),
    data.subarray(language + 1, translated),
    flag === 1 ? inflate(text) : text,
  ];
}

function inflate(bytes: Buffer): Buffer {
  return inflateSync(bytes, { maxOutputLength: MAX_INFLATED });
}

/** The chunk's data with its fields (keys replaced, the text last) written back in the layout it was read from. */
function rebuild(type: string, data: Buffer, fields: Buffer[]): Buffer {
  const nul = Buffer.alloc(1);
  const text = fields.at(-1) as Buffer;
  const keyword = fields[0] as Buffer;
  if (type === 'tEXt') return Buffer.concat([keyword, nul, text]);
  if (type === 'zTXt' || type === 'iCCP') return Buffer.concat([keyword, nul, nul, deflateSync(text)]);
  const [, language, translated] = fields as [Buffer, Buffer, Buffer, Buffer];
  const at = data.indexOf(0);
  const flag = data[at + 1] as number;
  const head = Buffer.from([flag, data[at + 2] as number]);
  return Buffer.concat([keyword, nul, head, language, nul, translated, nul, flag === 1 ? deflateSync(text) : text]);
}

/** A PNG chunk: length, type, data, and the CRC of type and data. */
function writeChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(data.length + 12);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}
