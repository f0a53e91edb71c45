import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import { chunk, SIGNATURE } from '../helpers/png-chunks.js';
import { tempDir } from '../helpers/temp.js';
import { requireTool, python } from '../helpers/tools.js';

// A key in a PNG's text chunks: deflated in zTXt, and in iTXt with its compression flag set, it is
// in no byte of the body, yet every image reader shows it. The stored image must hold the marker
// there instead, and still be a PNG every chunk of which has the right length and CRC.

const exec = promisify(execFile);
const KEY = 'd411e757da3c9f0db8204e3accc48fbfe1800269';

const nul = Buffer.alloc(1);
const text = (s: string) => Buffer.from(s, 'latin1');

/** A 2x1 RGB image with text chunks around its pixels, one of each kind. */
function png(key: string): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(2, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('tEXt', Buffer.concat([text('Comment'), nul, text(`made with key ${key}`)])),
    chunk(
      'zTXt',
      Buffer.concat([text('Source'), nul, nul, deflateSync(text(`https://x.example/?api_key=${key}&a=1`))]),
    ),
    chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0, 0, 0, 255]))),
    chunk(
      'iTXt',
      Buffer.concat([
        text('Description'),
        nul,
        Buffer.from([1, 0]),
        text('en'),
        nul,
        Buffer.from('Beschreibung', 'utf8'),
        nul,
        deflateSync(Buffer.from(`Schlüssel: ${key} – ok`, 'utf8')),
      ]),
    ),
    chunk(
      'iTXt',
      Buffer.concat([text('Plain'), nul, Buffer.from([0, 0]), nul, nul, Buffer.from(`key=${key}`, 'utf8')]),
    ),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The PNG as Python reads it: each chunk's type, whether its CRC holds, and its text inflated. */
const READ_PNG = `
import json, struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'signature'
at, chunks = 8, []
while at < len(data):
    length, kind = struct.unpack('>I4s', data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    crc, = struct.unpack('>I', data[at + 8 + length:at + 12 + length])
    kind = kind.decode('latin1')
    item = {'type': kind, 'crcOk': zlib.crc32(kind.encode('latin1') + body) == crc, 'length': length}
    if kind == 'tEXt':
        item['text'] = body.split(b'\\0', 1)[1].decode('latin1')
    elif kind == 'zTXt':
        k, rest = body.split(b'\\0', 1)
        item['text'] = zlib.decompress(rest[1:]).decode('latin1')
    elif kind == 'iTXt':
        k, rest = body.split(b'\\0', 1)
        flag, method, rest = rest[0], rest[1], rest[2:]
        lang, translated, t = rest.split(b'\\0', 2)
        item['text'] = (zlib.decompress(t) if flag == 1 else t).decode('utf8')
    elif kind == 'IDAT':
        item['pixels'] = list(zlib.decompress(body))
    chunks.append(item)
    at += 12 + length
assert at == len(data), 'trailing bytes'
print(json.dumps(chunks))
`;

interface PngChunk {
  type: string;
  crcOk: boolean;
  length: number;
  text?: string;
  pixels?: number[];
}

async function readPng(bytes: Buffer): Promise<PngChunk[]> {
  requireTool('python3');
  const file = join(await tempDir(), 'image.png');
  await writeFile(file, bytes);
  const { stdout } = await exec(python(), ['-c', READ_PNG, file]);
  return JSON.parse(stdout) as PngChunk[];
}

function redacted(body: Buffer, cuts: number[]): { out: Buffer; count: number } {
  const replacer = (SecretMarker.of([KEY]) as SecretMarker).replacer();
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    parts.push(replacer.push(body.subarray(from, cut)));
    from = cut;
  }
  parts.push(replacer.end());
  return { out: Buffer.concat(parts), count: replacer.count };
}

describe('a key in the text chunks of a PNG', () => {
  it('is replaced in tEXt, zTXt and iTXt (deflated or not), each chunk rewritten with its length and CRC', async () => {
    const body = png(KEY);
    const { out, count } = redacted(body, []);
    expect(count).toBe(4);
    const chunks = await readPng(out);
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'tEXt', 'zTXt', 'IDAT', 'iTXt', 'iTXt', 'IEND']);
    expect(chunks.every((c) => c.crcOk)).toBe(true);
    expect(chunks.map((c) => c.text).filter((t) => t !== undefined)).toEqual([
      `made with key ${KEY_MARKER}`,
      `https://x.example/?api_key=${KEY_MARKER}&a=1`,
      `Schlüssel: ${KEY_MARKER} – ok`,
      `key=${KEY_MARKER}`,
    ]);
    // The pixels and every chunk without a key are kept byte for byte.
    expect(chunks.find((c) => c.type === 'IDAT')?.pixels).toEqual([0, 255, 0, 0, 0, 0, 255]);
    expect(out.subarray(0, 33).equals(body.subarray(0, 33))).toBe(true);
    expect(out.subarray(-12).equals(body.subarray(-12))).toBe(true);
  });

  it('comes out the same however the body is cut into chunks', () => {
    const body = png(KEY);
    const whole = redacted(body, []);
    for (let cut = 0; cut <= body.length; cut++)
      expect(redacted(body, [cut]).out.equals(whole.out), `cut at ${cut}`).toBe(true);
    const everyByte = Array.from({ length: body.length - 1 }, (_, i) => i + 1);
    expect(redacted(body, everyByte)).toEqual(whole);
  });

  it('leaves a PNG without a key byte for byte, and leaves out a text chunk whose text does not inflate', async () => {
    const clean = png('no-key-here');
    expect(redacted(clean, [100]).out.equals(clean)).toBe(true);

    const broken = Buffer.concat([
      SIGNATURE,
      chunk('zTXt', Buffer.concat([text('Source'), nul, nul, text('not deflate data')])),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const { out, count } = redacted(broken, [20]);
    expect(count).toBe(1);
    expect((await readPng(out)).map((c) => c.type)).toEqual(['IEND']);
  });

  it('leaves out a text chunk too large to hold, however it arrives, and keeps the rest', async () => {
    const huge = Buffer.concat([text('Comment'), nul, Buffer.alloc(5 * 1024 * 1024, 0x41), text(KEY)]);
    const body = Buffer.concat([SIGNATURE, chunk('tEXt', huge), chunk('IEND', Buffer.alloc(0))]);
    const cuts = Array.from({ length: Math.floor(body.length / 65536) }, (_, i) => (i + 1) * 65536);
    const { out, count } = redacted(body, cuts);
    expect(count).toBe(1);
    expect(out.equals(Buffer.concat([SIGNATURE, chunk('IEND', Buffer.alloc(0))]))).toBe(true);
    expect((await readPng(out)).map((c) => c.type)).toEqual(['IEND']);
  });
});
