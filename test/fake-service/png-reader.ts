import { crc32, inflateSync } from 'node:zlib';

/** An independent PNG reader for the tests: checks framing and CRCs, inflates the image data. */
export interface PngChunk {
  type: string;
  length: number;
  data: Buffer;
}

export interface DecodedPng {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  chunks: PngChunk[];
  /** Unfiltered rows (filter 0 only), RGB. */
  pixel(x: number, y: number): [number, number, number];
}

const SIGNATURE = Buffer.from('89504e470d0a1a0a', 'hex');

export function readPng(bytes: Buffer): DecodedPng {
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error('bad signature');
  const chunks: PngChunk[] = [];
  let offset = 8;
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (data.length !== length) throw new Error(`chunk ${type} cut short`);
    const crc = bytes.readUInt32BE(offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== crc) throw new Error(`bad CRC in ${type}`);
    chunks.push({ type, length, data });
    offset += 12 + length;
  }
  if (chunks[0]?.type !== 'IHDR' || chunks.at(-1)?.type !== 'IEND') throw new Error('IHDR must come first, IEND last');
  const ihdr = chunks[0].data;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const stride = width * 3 + 1;
  if (raw.length !== stride * height) throw new Error('image data has the wrong size');
  return {
    width,
    height,
    bitDepth: ihdr[8]!,
    colorType: ihdr[9]!,
    chunks,
    pixel(x, y) {
      const i = y * stride + 1 + x * 3;
      if (raw[y * stride] !== 0) throw new Error('only filter 0 is expected');
      return [raw[i]!, raw[i + 1]!, raw[i + 2]!];
    },
  };
}
