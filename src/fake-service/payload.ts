import { stringify as stringifyLossless } from 'lossless-json';
/**
 * Response bodies. Most are small buffers rendered once per state; padded PNGs and endless bodies
 * are generated while they are written, so no body has to fit in memory.
 */
export interface Payload {
  /** Bytes announced in Content-Length; undefined sends the body chunked. */
  size: number | undefined;
  /** The whole body, when it is held in memory. */
  bytes?: Buffer;
  chunks(): Iterable<Buffer>;
}

/** A rendered resource: what a successful GET serves. */
export interface Representation {
  contentType: string;
  /** Epoch milliseconds; sent as Last-Modified and compared with If-Modified-Since. */
  lastModified: number;
  payload: Payload;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  payload?: Payload;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const XHTML_TYPE = 'application/xhtml+xml; charset=utf-8';
export const PNG_TYPE = 'image/png';
export const CSS_TYPE = 'text/css; charset=utf-8';

export function bufferPayload(bytes: Buffer): Payload {
  return { size: bytes.length, bytes, chunks: () => [bytes] };
}

export function jsonPayload(value: unknown): Payload {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // Ids past 2^53 are bigints (bigIds); lossless-json writes them as numbers with all their
    // digits. Only those few bodies take the slower writer.
    if (!(error instanceof TypeError)) throw error;
    text = stringifyLossless(value);
  }
  return bufferPayload(Buffer.from(text ?? 'null', 'utf8'));
}

export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, payload: jsonPayload(value) };
}

/** Error bodies were never documented; a small JSON object is what most services send. */
export function errorReply(
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): Reply {
  return jsonReply(status, { error, message }, headers);
}

let lastDate: [number, string] = [NaN, ''];

/** HTTP dates have whole seconds; comparisons elsewhere use the same truncation. */
export function httpDate(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  // Every body of a prototype carries the same date: formatting it once per run of them is enough.
  if (lastDate[0] !== seconds) lastDate = [seconds, new Date(seconds * 1000).toUTCString()];
  return lastDate[1];
}
