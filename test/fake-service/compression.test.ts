import { request } from 'node:http';
import { brotliDecompressSync, createGunzip, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  chooseCodings,
  encodeBytes,
  encodingHeader,
  parseAcceptEncoding,
  parseCompressSpec,
  type CompressionOptions,
} from '../../src/fake-service/compression.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { apiUrl } from './helpers.js';

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('parseCompressSpec', () => {
  it.each<[string, CompressionOptions]>([
    ['asked', { when: 'asked' }],
    ['always', { when: 'always' }],
    ['asked:br', { when: 'asked', codings: ['br'] }],
    ['always:gzip,br', { when: 'always', codings: ['gzip', 'br'] }],
    ['always:deflate-raw, X-GZIP', { when: 'always', codings: ['deflate-raw', 'x-gzip'] }],
  ])('%j', (spec, options) => {
    expect(parseCompressSpec(spec)).toEqual(options);
  });

  it.each(['', 'sometimes', 'always:zstd', 'asked:gzip:br', 'always:'])('rejects %j', (spec) => {
    expect(() => parseCompressSpec(spec)).toThrow();
  });
});

describe('parseAcceptEncoding', () => {
  it('reads codings and q-values, case-insensitively', () => {
    expect([...parseAcceptEncoding('gzip, Deflate;q=0.5 , br;q=0, *;Q=0.1')]).toEqual([
      ['gzip', 1],
      ['deflate', 0.5],
      ['br', 0],
      ['*', 0.1],
    ]);
    expect(parseAcceptEncoding(undefined).size).toBe(0);
  });
});

describe('chooseCodings', () => {
  it.each<[CompressionOptions, string | undefined, string[]]>([
    [{ when: 'asked' }, undefined, []],
    [{ when: 'asked' }, '', []],
    [{ when: 'asked' }, 'gzip, deflate, br', ['br']],
    [{ when: 'asked' }, 'gzip, deflate', ['gzip']],
    [{ when: 'asked' }, 'br;q=0.5, gzip', ['gzip']],
    [{ when: 'asked' }, 'deflate', ['deflate']],
    [{ when: 'asked' }, 'gzip;q=0, deflate;q=0.1', ['deflate']],
    [{ when: 'asked' }, '*', ['br']],
    [{ when: 'asked' }, '*, br;q=0', ['gzip']],
    [{ when: 'asked' }, 'identity', []],
    [{ when: 'asked', codings: ['gzip', 'br'] }, 'gzip, br', ['gzip', 'br']],
    [{ when: 'asked', codings: ['gzip', 'br'] }, 'gzip', []],
    [{ when: 'asked', codings: ['x-gzip'] }, 'gzip', ['x-gzip']],
    [{ when: 'asked', codings: ['deflate-raw'] }, 'deflate', ['deflate-raw']],
    [{ when: 'always' }, undefined, ['gzip']],
    [{ when: 'always', codings: ['br', 'gzip'] }, undefined, ['br', 'gzip']],
    [{ when: 'always', codings: ['br'] }, 'gzip;q=1, br;q=0', ['br']],
  ])('%j with Accept-Encoding %j: %j', (options, accept, codings) => {
    expect(chooseCodings(options, accept)).toEqual(codings);
  });
});

describe('encodeBytes', () => {
  it('applies the codings in order, each in its own form', () => {
    const body = Buffer.from('{"id":3}'.repeat(100));
    expect(gunzipSync(encodeBytes(body, ['gzip'])).equals(body)).toBe(true);
    expect(gunzipSync(encodeBytes(body, ['x-gzip'])).equals(body)).toBe(true);
    expect(inflateSync(encodeBytes(body, ['deflate'])).equals(body)).toBe(true);
    expect(inflateRawSync(encodeBytes(body, ['deflate-raw'])).equals(body)).toBe(true);
    expect(encodeBytes(body, ['identity'])).toBe(body);
    expect(gunzipSync(brotliDecompressSync(encodeBytes(body, ['gzip', 'br']))).equals(body)).toBe(true);
    expect(encodingHeader(['deflate-raw', 'x-gzip', 'br', 'identity'])).toBe('deflate, x-gzip, br, identity');
  });
});

/** One GET with exactly the headers given (fetch would add its own Accept-Encoding). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: NodeJS.Dict<string | string[]>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe('a compressing fake service', () => {
  it('compresses when asked only when asked, and always even when not', async () => {
    service = await startFakeService({ compression: { when: 'asked' } });
    const url = apiUrl(service, 'prototypes/3.json', service.keys.readOnly);
    const plain = await rawGet(url, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const asked = await rawGet(url, { 'accept-encoding': 'gzip' });
    expect(asked.headers['content-encoding']).toBe('gzip');
    expect(asked.headers['vary']).toBe('Accept-Encoding');
    expect(Number(asked.headers['content-length'])).toBe(asked.body.length);
    expect(gunzipSync(asked.body).equals(plain.body)).toBe(true);

    service.setCompression({ when: 'always', codings: ['deflate-raw', 'br'] });
    const always = await rawGet(url, {});
    expect(always.headers['content-encoding']).toBe('deflate, br');
    expect(inflateRawSync(brotliDecompressSync(always.body)).equals(plain.body)).toBe(true);
  });

  it('compresses streamed bodies (padded PNGs) too', async () => {
    service = await startFakeService({ compression: { when: 'always' }, dataset: { pngPaddingBytes: 300_000 } });
    const url = apiUrl(service, 'prototypes/3/pages/page0001.png', service.keys.readOnly);
    const encoded = await rawGet(url, {});
    expect(encoded.headers['content-encoding']).toBe('gzip');
    service.setCompression(undefined);
    const plain = await rawGet(url, {});
    expect(plain.body.length).toBeGreaterThan(300_000);
    expect(gunzipSync(encoded.body).equals(plain.body)).toBe(true);
  });

  it('serves a bomb: about a MiB of valid gzip that inflates to 1 GiB', async () => {
    service = await startFakeService({
      faults: { paths: [{ path: '/rabbit/api/prototypes/3.json', kind: 'coding-bomb' }] },
    });
    const bomb = await rawGet(apiUrl(service, 'prototypes/3.json', service.keys.readOnly), {});
    expect(bomb.headers['content-encoding']).toBe('gzip');
    expect(bomb.body.length).toBeLessThan(1.1 * 1024 * 1024);
    // The trailer's length field: what it inflates to (mod 2^32).
    expect(bomb.body.readUInt32LE(bomb.body.length - 4)).toBe(1024 ** 3);
    // Inflated as a stream (counted, not kept): valid to its CRC, and 1 GiB long. In pieces of a MiB:
    // zlib's 16 KiB would be 65,536 chunks, and handing them over cost three quarters of the inflating.
    let inflated = 0;
    const gunzip = createGunzip({ chunkSize: 1024 * 1024 });
    gunzip.on('data', (chunk: Buffer) => (inflated += chunk.length));
    await new Promise<void>((resolve, reject) => {
      gunzip.on('end', resolve).on('error', reject);
      gunzip.end(bomb.body);
    });
    expect(inflated).toBe(1024 ** 3);
  });
});
