import { createCipheriv } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/**
 * A minimal PNG encoder: 8-bit RGB, no interlace, one IDAT. Enough to serve real images that any
 * decoder accepts, without an image library.
 */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Private, ancillary, safe-to-copy: decoders skip it, so padding never changes the picture. */
export const PADDING_CHUNK_TYPE = 'raBt';
// Chunks may hold 2^31-1 bytes; smaller ones keep each CRC pass and each write modest.
const PADDING_CHUNK_MAX = 8 * 1024 * 1024;
const NOISE_BLOCK = 64 * 1024;

export interface Canvas {
  width: number;
  height: number;
  /** RGB, row-major, 3 bytes per pixel. */
  pixels: Buffer;
}

export type Rgb = readonly [number, number, number];

export function createCanvas(width: number, height: number, background: Rgb): Canvas {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    pixels[i] = background[0];
    pixels[i + 1] = background[1];
    pixels[i + 2] = background[2];
  }
  return { width, height, pixels };
}

/** Fill a rectangle, clipped to the canvas. */
export function fillRect(canvas: Canvas, x: number, y: number, w: number, h: number, color: Rgb): void {
  const x0 = Math.max(0, Math.floor(x));
  const y0 = Math.max(0, Math.floor(y));
  const x1 = Math.min(canvas.width, Math.floor(x + w));
  const y1 = Math.min(canvas.height, Math.floor(y + h));
  for (let row = y0; row < y1; row++) {
    for (let col = x0; col < x1; col++) {
      const i = (row * canvas.width + col) * 3;
      canvas.pixels[i] = color[0];
      canvas.pixels[i + 1] = color[1];
      canvas.pixels[i + 2] = color[2];
    }
  }
}

/** Signature, IHDR and IDAT: everything but IEND, so padding chunks can follow. */
export function encodeHead(canvas: Canvas): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(canvas.width, 0);
  ihdr.writeUInt32BE(canvas.height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const stride = canvas.width * 3;
  const raw = Buffer.alloc((stride + 1) * canvas.height);
  for (let row = 0; row < canvas.height; row++) {
    // Filter byte 0 (none) before each scanline.
    canvas.pixels.copy(raw, row * (stride + 1) + 1, row * stride, (row + 1) * stride);
  }
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw))]);
}

export const IEND = chunk('IEND', Buffer.alloc(0));

export function encodePng(canvas: Canvas): Buffer {
  return Buffer.concat([encodeHead(canvas), IEND]);
}

export function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** Bytes that `paddingChunks` adds for `padding` bytes of noise: 12 bytes of framing per chunk. */
export function paddedSize(padding: number): number {
  if (padding <= 0) return 0;
  return padding + 12 * Math.ceil(padding / PADDING_CHUNK_MAX);
}

/**
 * Padding chunks holding `padding` bytes of AES-CTR keystream: incompressible, reproducible from
 * the key, and produced block by block so a 300 MB benchmark never holds more than one block.
 */
export function* paddingChunks(padding: number, key: Buffer): Generator<Buffer> {
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(NOISE_BLOCK);
  let left = padding;
  while (left > 0) {
    const length = Math.min(left, PADDING_CHUNK_MAX);
    const header = Buffer.alloc(8);
    header.writeUInt32BE(length, 0);
    header.write(PADDING_CHUNK_TYPE, 4, 'latin1');
    yield header;
    let crc = crc32(header.subarray(4));
    for (let done = 0; done < length;) {
      const block = cipher.update(zeros.subarray(0, Math.min(NOISE_BLOCK, length - done)));
      crc = crc32(block, crc);
      done += block.length;
      yield block;
    }
    const trailer = Buffer.alloc(4);
    trailer.writeUInt32BE(crc, 0);
    yield trailer;
    left -= length;
  }
}
