import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { openZip } from '../../src/zip/zip-reader.js';
import { writeZip } from '../helpers/write-zip.js';
import { dataOffsetOf, flipByte, renameInPlace, truncate } from './zip-bytes.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-reader-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(4000)]);
const TEXT = '{"pages":["page0001","page0002"]}\n'.repeat(200);

async function sample(name = 'sample.zip'): Promise<string> {
  const path = join(dir, name);
  await writeZip(
    [
      { name: 'manifest.json', data: '{"formatVersion":1}', store: false },
      { name: 'prototypes/1/r1/pages.json', data: TEXT, store: false },
      { name: 'prototypes/1/r1/pages/page0001.png', data: PNG, store: true },
    ],
    path,
  );
  return path;
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; entry?: string; reason?: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRabbitError(error)) throw new Error(`expected a RabbitError, got ${String(error)}`);
  return {
    code: error.code,
    message: error.message,
    ...(error.entry !== undefined ? { entry: error.entry } : {}),
    ...(error.reason !== undefined ? { reason: error.reason } : {}),
  };
}

async function drain(promise: Promise<NodeJS.ReadableStream>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await promise) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('openZip', () => {
  it('lists entries with sizes, CRCs and methods', async () => {
    const reader = await openZip(await sample());
    try {
      const png = reader.entries.get('prototypes/1/r1/pages/page0001.png');
      expect(png).toMatchObject({ compressionMethod: 0, compressedSize: PNG.length, uncompressedSize: PNG.length });
      const pages = reader.entries.get('prototypes/1/r1/pages.json');
      expect(pages?.compressionMethod).toBe(8);
      expect(pages?.uncompressedSize).toBe(Buffer.byteLength(TEXT));
      expect(pages?.compressedSize).toBeLessThan(Buffer.byteLength(TEXT));
      expect(reader.duplicates).toEqual([]);
      expect((await drain(reader.openEntry('prototypes/1/r1/pages.json'))).toString()).toBe(TEXT);
    } finally {
      reader.close();
    }
  });

  it.each([
    {
      label: 'a truncated download',
      make: async (p: string) => truncate(p, (await stat(p)).size - 30),
      pattern: /cut short/,
    },
    {
      label: 'bytes added after the end',
      make: (p: string) => appendFile(p, Buffer.alloc(100)),
      pattern: /or bytes were added after it/,
    },
    {
      label: 'a text file',
      make: (p: string) => writeFile(p, 'this is a note, not an archive\n'),
      pattern: /not a zip archive/,
    },
    { label: 'an empty file', make: (p: string) => writeFile(p, ''), pattern: /empty/ },
    { label: 'a missing file', make: (p: string) => rm(p), pattern: /does not exist/ },
  ])('refuses $label with NOT_A_ZIP and a one-line reason', async ({ make, pattern }) => {
    const path = await sample('broken.zip');
    await make(path);
    const { code, message } = await failure(openZip(path));
    expect(code).toBe('NOT_A_ZIP');
    expect(message).toMatch(pattern);
    expect(message).toContain('broken.zip');
    expect(message).not.toContain('\n');
  });

  it('fails a stored entry whose data was altered with ARCHIVE_CORRUPT (CRC)', async () => {
    const path = await sample();
    const name = 'prototypes/1/r1/pages/page0001.png';
    await flipByte(path, (await dataOffsetOf(path, name)) + 100);
    const reader = await openZip(path);
    try {
      const { code, message, entry, reason } = await failure(drain(reader.openEntry(name)));
      expect(code).toBe('ARCHIVE_CORRUPT');
      expect(message).toContain(name);
      expect(message).toMatch(/CRC/);
      // The entry and the fault as fields, for callers that name the entry themselves (verify).
      expect(entry).toBe(name);
      expect(reason).toMatch(/CRC/);
      expect(reason).not.toContain(name);
      // The other entries still read.
      expect((await reader.readEntry('manifest.json')).toString()).toBe('{"formatVersion":1}');
    } finally {
      reader.close();
    }
  });

  it('fails a deflated entry whose data was altered with ARCHIVE_CORRUPT', async () => {
    const path = await sample();
    const name = 'prototypes/1/r1/pages.json';
    await flipByte(path, (await dataOffsetOf(path, name)) + 10);
    const reader = await openZip(path);
    try {
      const { code, message } = await failure(reader.readEntry(name));
      expect(code).toBe('ARCHIVE_CORRUPT');
      expect(message).toContain(name);
    } finally {
      reader.close();
    }
  });

  it('lets go of its index on close, and refuses a lookup after it rather than use a stale descriptor', async () => {
    const reader = await openZip(await sample());
    expect(reader.entries.get('prototypes/1/r1/pages.json')).toBeDefined();
    reader.close();
    expect(() => reader.index).toThrow(/after it was closed/);
    expect(() => reader.entries.get('prototypes/1/r1/pages.json')).toThrow(/after it was closed/);
  });

  it('refuses to read an entry larger than maxBytes', async () => {
    const reader = await openZip(await sample());
    try {
      expect((await failure(reader.readEntry('prototypes/1/r1/pages.json', 100))).code).toBe('ARCHIVE_CORRUPT');
    } finally {
      reader.close();
    }
  });

  it('reports a name listed twice as a duplicate', async () => {
    const path = join(dir, 'dup.zip');
    await writeZip(
      [
        { name: 'aaaa.json', data: '1', store: false },
        { name: 'bbbb.json', data: '2', store: false },
      ],
      path,
    );
    await renameInPlace(path, 'bbbb.json', 'aaaa.json');
    const reader = await openZip(path);
    try {
      expect(reader.duplicates).toEqual(['aaaa.json']);
      expect([...reader.entries.keys()]).toEqual(['aaaa.json']);
    } finally {
      reader.close();
    }
  });

  it('opened for a few names, serves those and the first of a repeated one, and anything else too', async () => {
    const path = join(dir, 'dup.zip');
    await writeZip(
      [
        { name: 'aaaa.json', data: '1', store: false },
        { name: 'bbbb.json', data: '2', store: false },
        { name: 'manifest.json', data: '{}', store: false },
      ],
      path,
    );
    await renameInPlace(path, 'bbbb.json', 'aaaa.json');
    const reader = await openZip(path, { only: ['aaaa.json', 'none.json'] });
    try {
      expect((await reader.readEntry('aaaa.json')).toString()).toBe('1');
      expect(reader.entries.has('none.json')).toBe(false);
      expect((await reader.readEntry('manifest.json')).toString()).toBe('{}');
      expect(reader.duplicates).toEqual(['aaaa.json']);
      expect(reader.entries.get('aaaa.json')?.uncompressedSize).toBe(1);
    } finally {
      reader.close();
    }
  });

  it.each([
    ['../evil.json', undefined],
    ['zz\\evil.json', undefined],
    ['../evil.json', ['manifest.json']],
  ])('refuses an archive holding the unsafe name %j (only %j)', async (unsafe, only) => {
    const path = join(dir, 'unsafe.zip');
    await writeZip([{ name: 'zz/evil.json', data: '{}', store: false }], path);
    await renameInPlace(path, 'zz/evil.json', unsafe);
    const error = await openZip(path, only ? { only } : {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'ARCHIVE_CORRUPT')).toBe(true);
    expect(isRabbitError(error) ? error.entry : undefined).toBe(unsafe);
  });
});
