// Shows: a key in a PNG's iCCP chunk (an ICC profile, deflated like zTXt, inflated by every reader that colour-manages) passes the key scan untouched.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SecretMarker } from '../../src/core/secret-marker.js';
import { chunk, SIGNATURE } from '../helpers/png-chunks.js';
import { tempDir } from '../helpers/temp.js';
import { requireTool, python } from '../helpers/tools.js';

const exec = promisify(execFile);
const KEY = 'd411e757da3c9f0db8204e3accc48fbfe1800269';

/** A 1x1 RGB image whose ICC profile (its description tag, as tools write one) names the key. */
function png(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const profile = Buffer.concat([Buffer.alloc(128), Buffer.from(`desc made from https://x.example/?api_key=${KEY}`)]);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('iCCP', Buffer.concat([Buffer.from('icc\0\0', 'latin1'), deflateSync(profile)])),
    chunk('IDAT', deflateSync(Buffer.from([0, 1, 2, 3]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The ICC profile as Python reads it from the PNG (PNG spec: name, NUL, method 0, zlib stream). */
const READ_ICCP = `
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
at = 8
while at < len(data):
    length, kind = struct.unpack('>I4s', data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    if kind == b'iCCP':
        name, rest = body.split(b'\\0', 1)
        sys.stdout.write(zlib.decompress(rest[1:]).decode('latin1'))
    at += 12 + length
`;

describe('a key in a PNG ICC profile', () => {
  it('is not in the profile a reader inflates from the stored image', async () => {
    requireTool('python3');
    const replacer = (SecretMarker.of([KEY]) as SecretMarker).replacer();
    const body = png();
    const out = Buffer.concat([replacer.push(body), replacer.end()]);
    const file = join(await tempDir(), 'image.png');
    await writeFile(file, out);
    const { stdout } = await exec(python(), ['-c', READ_ICCP, file]);
    expect(stdout).toContain('desc made from');
    expect(stdout).not.toContain(KEY);
  });
});
