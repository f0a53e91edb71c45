import { randomBytes } from 'node:crypto';
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  DecodedBody,
  isZlibWrapped,
  parseContentEncoding,
  wireCap,
  type Coding,
  type DecodeOptions,
} from '../../src/client/content-coding.js';
import { isRabbitError, type ErrorCode } from '../../src/core/errors.js';
import type { ChunkSource, OnChunk } from '../../src/core/read-chunks.js';
import { codingBombReply } from '../../src/fake-service/compression.js';

/** Quality 5, as servers compress on the fly; the default (11) is far slower to make. */
const BR = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** A wire of given chunks that, like a response body, waits for a reader's promise before the next chunk. */
function wire(chunks: Iterable<Buffer>): ChunkSource & { aborted: unknown; sent: number } {
  const source = {
    aborted: undefined as unknown,
    sent: 0,
    async read(onChunk: OnChunk) {
      for (const chunk of chunks) {
        if (source.aborted !== undefined) throw source.aborted;
        source.sent += chunk.length;
        await onChunk(chunk);
      }
    },
  };
  return source;
}

function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

async function decode(
  chunks: Iterable<Buffer>,
  codings: Coding[],
  extra: Partial<DecodeOptions> = {},
  slowReader = false,
): Promise<{ body: Buffer; decoded: DecodedBody; source: ReturnType<typeof wire> }> {
  const source = wire(chunks);
  const decoded = new DecodedBody(source, {
    codings,
    maxBytes: 64 * 1024 * 1024,
    source: '/x.json',
    abort: (error) => (source.aborted = error),
    ...extra,
  });
  const parts: Buffer[] = [];
  await decoded.read((chunk) => {
    parts.push(chunk);
    return slowReader ? new Promise((resolve) => setImmediate(resolve)) : undefined;
  });
  return { body: Buffer.concat(parts), decoded, source };
}

async function failure(promise: Promise<unknown>): Promise<ErrorCode | string> {
  try {
    await promise;
  } catch (error) {
    return isRabbitError(error) ? error.code : String(error);
  }
  return 'no error';
}

describe('parseContentEncoding', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['gzip', ['gzip']],
    ['x-gzip', ['gzip']],
    [' GZip ', ['gzip']],
    ['deflate', ['deflate']],
    ['br', ['br']],
    ['identity', []],
    ['Identity, gzip', ['gzip']],
    // Applied gzip first, then br: the list is in the order applied.
    ['gzip, br', ['gzip', 'br']],
    ['gzip,br ,  deflate', ['gzip', 'br', 'deflate']],
    ['gzip,,br', ['gzip', 'br']],
  ])('%j is %j', (header, codings) => {
    expect(parseContentEncoding(header, '/x.json')).toEqual(codings);
  });

  it.each(['compress', 'zstd', 'gzip, lzma', 'br;q=1', 'gzip,gzip,gzip,gzip,gzip,gzip'])(
    '%j is an UNKNOWN_CODING of the resource',
    (header) => {
      let thrown: unknown;
      try {
        parseContentEncoding(header, '/x.json');
      } catch (error) {
        thrown = error;
      }
      expect(isRabbitError(thrown, 'UNKNOWN_CODING')).toBe(true);
      expect((thrown as { errorClass: string }).errorClass).toBe('resource');
    },
  );
});

describe('isZlibWrapped', () => {
  const data = Buffer.from('{"id":3,"name":"a prototype"}'.repeat(20));
  it.each([
    ['zlib, default level', deflateSync(data), true],
    ['zlib, level 1', deflateSync(data, { level: 1 }), true],
    ['zlib, level 9', deflateSync(data, { level: 9 }), true],
    ['raw, default level', deflateRawSync(data), false],
    ['raw, level 0 (stored)', deflateRawSync(data, { level: 0 }), false],
    ['raw, level 9', deflateRawSync(data, { level: 9 }), false],
    ['one byte', Buffer.from([0x78]), false],
  ])('%s: %s', (_name, bytes, wrapped) => {
    expect(isZlibWrapped(bytes)).toBe(wrapped);
  });
});

describe('wireCap', () => {
  it('leaves room for incompressible bytes run through any coding, and not much more', () => {
    for (const size of [0, 1000, 300 * 1024]) {
      const bytes = randomBytes(size);
      const worst = Math.max(
        gzipSync(gzipSync(bytes)).length,
        brotliCompressSync(bytes, BR).length,
        deflateSync(bytes, { level: 0 }).length,
      );
      expect(worst).toBeLessThanOrEqual(wireCap(size));
      expect(wireCap(size)).toBeLessThan(size * 1.05 + 128 * 1024);
    }
  });
});

describe('DecodedBody', () => {
  const json = Buffer.from(JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => ({ i, n: `item ${i}` })) }));
  const mixed = Buffer.concat([json, randomBytes(300 * 1024), json]);

  it.each<[string, Coding[], (b: Buffer) => Buffer]>([
    ['gzip', ['gzip'], (b) => gzipSync(b)],
    ['deflate (zlib-wrapped)', ['deflate'], (b) => deflateSync(b)],
    ['deflate (raw)', ['deflate'], (b) => deflateRawSync(b)],
    ['br', ['br'], (b) => brotliCompressSync(b, BR)],
    ['gzip then br', ['gzip', 'br'], (b) => brotliCompressSync(gzipSync(b), BR)],
    [
      'raw deflate then gzip then zlib deflate',
      ['deflate', 'gzip', 'deflate'],
      (b) => deflateSync(gzipSync(deflateRawSync(b))),
    ],
  ])(
    'decodes %s byte for byte, whatever the wire chunks and however slow the reader',
    async (_name, codings, encode) => {
      for (const body of [json, mixed]) {
        const encoded = encode(body);
        for (const size of [1, 997, 64 * 1024, encoded.length]) {
          if (size === 1 && encoded.length > 4000) continue;
          const { body: out, decoded } = await decode(pieces(encoded, size), codings, {}, size === 997);
          expect(out.equals(body)).toBe(true);
          expect(decoded.wireBytes).toBe(encoded.length);
          expect(decoded.decodedBytes).toBe(body.length);
        }
      }
    },
  );

  it('reports every wire byte to onWire (the watchdog), not the decoded ones', async () => {
    const encoded = gzipSync(json);
    let seen = 0;
    await decode(pieces(encoded, 100), ['gzip'], { onWire: (bytes) => (seen += bytes) });
    expect(seen).toBe(encoded.length);
    expect(seen).toBeLessThan(json.length / 3);
  });

  it('takes an empty body declared as encoded as empty', async () => {
    const { body } = await decode([], ['gzip']);
    expect(body.length).toBe(0);
  });

  it('fails a body whose check does not match, or which is cut short, or is not in its coding, as BODY_UNDECODABLE', async () => {
    const corrupt = gzipSync(json);
    corrupt.writeUInt32LE(corrupt.readUInt32LE(corrupt.length - 8) ^ 1, corrupt.length - 8);
    expect(await failure(decode([corrupt], ['gzip']))).toBe('BODY_UNDECODABLE');
    const gz = gzipSync(json);
    expect(await failure(decode([gz.subarray(0, gz.length >> 1)], ['gzip']))).toBe('BODY_UNDECODABLE');
    const br = brotliCompressSync(json);
    expect(await failure(decode([br.subarray(0, br.length - 4)], ['br']))).toBe('BODY_UNDECODABLE');
    expect(await failure(decode([json], ['gzip']))).toBe('BODY_UNDECODABLE');
    expect(await failure(decode([json], ['deflate']))).toBe('BODY_UNDECODABLE');
    expect(await failure(decode([Buffer.from([0x78])], ['deflate']))).toBe('BODY_UNDECODABLE');
    expect(await failure(decode([gzipSync(json)], ['br']))).toBe('BODY_UNDECODABLE');
  });

  it('checks Content-Length against the bytes on the wire', async () => {
    const encoded = gzipSync(json);
    const { body } = await decode([encoded], ['gzip'], { expectedWireLength: encoded.length });
    expect(body.equals(json)).toBe(true);
    expect(await failure(decode([encoded], ['gzip'], { expectedWireLength: encoded.length + 10 }))).toBe(
      'BODY_TRUNCATED',
    );
  });

  it('stops a bomb at the decoded cap: the inflater is dropped, the transfer aborted, little of the wire read', async () => {
    const bomb = codingBombReply({ status: 200, headers: {} }).payload?.chunks() as Iterable<Buffer>;
    const cap = 4 * 1024 * 1024;
    const source = wire(bomb);
    const decoded = new DecodedBody(source, {
      codings: ['gzip'],
      maxBytes: cap,
      source: '/bomb.json',
      abort: (error) => (source.aborted = error),
    });
    let handed = 0;
    let thrown: unknown;
    await decoded
      .read((chunk) => {
        handed += chunk.length;
        return new Promise((resolve) => setImmediate(resolve));
      })
      .catch((error: unknown) => (thrown = error));
    expect(isRabbitError(thrown, 'BODY_TOO_LARGE')).toBe(true);
    expect((thrown as Error).message).toContain(`decoded body exceeds the cap of ${cap} bytes`);
    expect(isRabbitError(source.aborted, 'BODY_TOO_LARGE')).toBe(true);
    expect(handed).toBeLessThanOrEqual(cap);
    expect(handed).toBeGreaterThan(cap - 64 * 1024);
    // A MiB of zeros takes about a KiB of gzip: the wire stopped once the inflater's input buffer
    // (16 KiB) was full, not a MiB (the whole bomb) later.
    expect(source.sent).toBeLessThan(32 * 1024);
  });

  it('caps an encoded body on the wire that yields nothing (a stream of empty blocks)', async () => {
    const empty = deflateRawSync(Buffer.alloc(0), { finishFlush: 2 /* Z_SYNC_FLUSH */ });
    function* endless(): Generator<Buffer> {
      for (;;) yield Buffer.concat(Array.from({ length: 1000 }, () => empty));
    }
    const code = await failure(decode(endless(), ['deflate'], { maxBytes: 10_000 }));
    expect(code).toBe('BODY_TOO_LARGE');
  });

  it("passes on the reader's own error and stops the transfer", async () => {
    const source = wire(pieces(gzipSync(mixed), 1000));
    const decoded = new DecodedBody(source, {
      codings: ['gzip'],
      maxBytes: 1e9,
      source: '/x',
      abort: (error) => (source.aborted = error),
    });
    const boom = new Error('disk says no');
    await expect(
      decoded.read(() => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(source.aborted).toBe(boom);
  });
});
