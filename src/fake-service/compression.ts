import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import {
  brotliCompressSync,
  constants,
  crc32,
  createBrotliCompress,
  createDeflate,
  createDeflateRaw,
  createGzip,
  deflateRawSync,
  deflateSync,
  gzipSync,
} from 'node:zlib';
import type { Payload, Reply } from './payload.js';
import { bufferPayload, JSON_TYPE } from './payload.js';

/**
 * Compressed answers, as real servers and the proxies in front of them give them: only when the
 * client asks (Accept-Encoding, q-values honoured) or always, asked or not; with one coding or a
 * stack of them. `deflate-raw` is sent as `deflate` in the bare RFC 1951 form some servers use.
 */
export type ServedCoding = 'gzip' | 'x-gzip' | 'deflate' | 'deflate-raw' | 'br' | 'identity';

export const SERVED_CODINGS: readonly ServedCoding[] = ['gzip', 'x-gzip', 'deflate', 'deflate-raw', 'br', 'identity'];

export interface CompressionOptions {
  /** `asked`: only when Accept-Encoding allows it; `always`: whatever the client asked for. */
  when: 'asked' | 'always';
  /**
   * Codings in the order they are applied (`['gzip', 'br']` is sent as `Content-Encoding: gzip, br`).
   * None: `asked` picks the client's favourite of br, gzip and deflate; `always` sends gzip.
   */
  codings?: ServedCoding[];
}

/** Our preference when the client likes several codings as much. */
const PREFERRED: readonly ServedCoding[] = ['br', 'gzip', 'deflate'];

/** Streamed bodies are compressed in memory before they are sent; larger ones go out as they are. */
const MAX_STREAMED_BYTES = 64 * 1024 * 1024;

/** `asked`, `always`, `asked:gzip`, `always:gzip,br` (the --compress flag of serve). */
export function parseCompressSpec(spec: string): CompressionOptions {
  const [when, list, ...rest] = spec.split(':');
  if ((when !== 'asked' && when !== 'always') || rest.length > 0) {
    throw new Error(`"${spec}": use asked or always, optionally with codings, e.g. always:gzip,br`);
  }
  if (list === undefined) return { when };
  const codings = list.split(',').map((name) => name.trim().toLowerCase());
  for (const name of codings) {
    if (!(SERVED_CODINGS as readonly string[]).includes(name))
      throw new Error(`unknown coding "${name}": use ${SERVED_CODINGS.join(', ')}`);
  }
  return { when, codings: codings as ServedCoding[] };
}

/** q-value per coding named in an Accept-Encoding header (lower case; `*` for the rest). */
export function parseAcceptEncoding(header: string | undefined): Map<string, number> {
  const accepted = new Map<string, number>();
  for (const member of (header ?? '').split(',')) {
    const [name = '', ...params] = member.split(';').map((part) => part.trim());
    if (name === '') continue;
    let q = 1;
    for (const param of params) {
      const match = /^q=([0-9.]+)$/i.exec(param);
      if (match) q = Math.min(1, Number(match[1]));
    }
    accepted.set(name.toLowerCase(), Number.isNaN(q) ? 0 : q);
  }
  return accepted;
}

/** How much the client wants `coding`: 0 when it does not. */
function qualityOf(accepted: Map<string, number>, coding: ServedCoding): number {
  if (coding === 'identity') return 1;
  const names = coding === 'deflate-raw' ? ['deflate'] : coding === 'x-gzip' ? ['x-gzip', 'gzip'] : [coding];
  for (const name of names) {
    const q = accepted.get(name);
    if (q !== undefined) return q;
  }
  return accepted.get('*') ?? 0;
}

/** The codings to apply to an answer, in order; empty: send it as it is. */
export function chooseCodings(options: CompressionOptions, acceptEncoding: string | undefined): ServedCoding[] {
  if (options.when === 'always') return options.codings ?? ['gzip'];
  const accepted = parseAcceptEncoding(acceptEncoding);
  if (options.codings !== undefined) {
    return options.codings.every((coding) => qualityOf(accepted, coding) > 0) ? options.codings : [];
  }
  let best: ServedCoding | undefined;
  let bestQ = 0;
  for (const coding of PREFERRED) {
    const q = qualityOf(accepted, coding);
    if (q > bestQ) [best, bestQ] = [coding, q];
  }
  return best === undefined ? [] : [best];
}

/** The Content-Encoding header naming `codings` in the order applied. */
export function encodingHeader(codings: readonly ServedCoding[]): string {
  return codings.map((coding) => (coding === 'deflate-raw' ? 'deflate' : coding)).join(', ');
}

const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** `bytes` with each coding applied in turn. */
export function encodeBytes(bytes: Buffer, codings: readonly ServedCoding[]): Buffer {
  let out = bytes;
  for (const coding of codings) {
    if (coding === 'gzip' || coding === 'x-gzip') out = gzipSync(out);
    else if (coding === 'deflate') out = deflateSync(out);
    else if (coding === 'deflate-raw') out = deflateRawSync(out);
    else if (coding === 'br') out = brotliCompressSync(out, BROTLI);
  }
  return out;
}

function encoderStream(coding: ServedCoding): Transform | undefined {
  if (coding === 'gzip' || coding === 'x-gzip') return createGzip();
  if (coding === 'deflate') return createDeflate();
  if (coding === 'deflate-raw') return createDeflateRaw();
  if (coding === 'br') return createBrotliCompress(BROTLI);
  return undefined;
}

/** A streamed (lazily made) body compressed into memory; undefined when it is endless or too large. */
async function encodeStreamed(payload: Payload, codings: readonly ServedCoding[]): Promise<Buffer | undefined> {
  if (payload.size === undefined || payload.size > MAX_STREAMED_BYTES) return undefined;
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      parts.push(chunk);
      done();
    },
  });
  const encoders = codings.map(encoderStream).filter((stream): stream is Transform => stream !== undefined);
  await pipeline([Readable.from(payload.chunks()), ...encoders, sink]);
  return Buffer.concat(parts);
}

/**
 * The reply as a compressing server sends it: the body in the chosen codings, Content-Encoding
 * and Content-Length of the encoded bytes, and Vary. A reply without a body, or one already
 * encoded (a coding fault), is left alone.
 */
export async function compressReply(
  options: CompressionOptions | undefined,
  acceptEncoding: string | undefined,
  reply: Reply,
): Promise<Reply> {
  const payload = reply.payload;
  if (options === undefined || payload === undefined || reply.headers['content-encoding'] !== undefined) return reply;
  const codings = chooseCodings(options, acceptEncoding);
  if (codings.length === 0) return reply;
  const encoded =
    payload.bytes !== undefined ? encodeBytes(payload.bytes, codings) : await encodeStreamed(payload, codings);
  if (encoded === undefined) return reply;
  return {
    ...reply,
    headers: { ...reply.headers, 'content-encoding': encodingHeader(codings), vary: 'Accept-Encoding' },
    payload: bufferPayload(encoded),
  };
}

/**
 * A gzip body whose CRC does not match what it inflates to: every byte of it decodes, and the
 * check at the end fails, as a body damaged on its way does.
 */
export function corruptCodingReply(reply: Reply): Reply {
  const bytes = reply.payload?.bytes ?? Buffer.from('{"id": 3}');
  const encoded = Buffer.from(gzipSync(bytes));
  const crcAt = encoded.length - 8;
  encoded.writeUInt32LE((encoded.readUInt32LE(crcAt) ^ 0xffffffff) >>> 0, crcAt);
  return {
    status: 200,
    headers: { 'content-type': reply.headers['content-type'] ?? JSON_TYPE, 'content-encoding': 'gzip' },
    payload: bufferPayload(encoded),
  };
}

/** What a decompression bomb inflates to: 1 GiB of zeros from about 1 MiB of gzip. */
export const BOMB_INFLATED_BYTES = 1024 ** 3;
const BOMB_PIECE = 1024 * 1024;

/**
 * A decompression bomb, made as it is sent: a gzip header, the same deflate blocks of a MiB of
 * zeros over and over (each ends byte-aligned with a full flush, so they may be strung together),
 * a last empty block and the trailer. Its CRC is computed as the blocks go, so the body is valid
 * gzip to its end; a client that heeds its cap never gets there.
 */
export function codingBombReply(reply: Reply): Reply {
  const zeros = Buffer.alloc(BOMB_PIECE);
  const block = deflateRawSync(zeros, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const payload: Payload = {
    size: undefined,
    *chunks() {
      yield Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
      let crc = 0;
      for (let done = 0; done < BOMB_INFLATED_BYTES; done += BOMB_PIECE) {
        crc = crc32(zeros, crc);
        yield block;
      }
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(crc >>> 0, 0);
      trailer.writeUInt32LE(BOMB_INFLATED_BYTES % 2 ** 32, 4);
      // A final, empty block of fixed codes: BFINAL 1, BTYPE 01, end-of-block code.
      yield Buffer.concat([Buffer.from([0x03, 0x00]), trailer]);
    },
  };
  return {
    status: 200,
    headers: { 'content-type': reply.headers['content-type'] ?? JSON_TYPE, 'content-encoding': 'gzip' },
    payload,
  };
}
