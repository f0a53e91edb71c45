import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RabbitError, isRabbitError } from '../../src/core/errors.js';
import { openZip } from '../../src/zip/zip-reader.js';
import { outputError } from '../../src/core/output-file.js';
import { ZipNameTable } from '../../src/zip/zip-name-table.js';
import { ZipWriter } from '../../src/zip/zip-writer.js';
import { pngLike } from './readers/fixture.js';
import { zipLayout } from '../helpers/zip-layout.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-writer-api-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (isRabbitError(error) ? error.code : error),
  );
}

async function leftovers(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.tmp'));
}

async function readBack(path: string, name: string): Promise<Buffer> {
  const reader = await openZip(path);
  try {
    return await reader.readEntry(name);
  } finally {
    reader.close();
  }
}

/** Two valid entry names with the same CRC-32, found by a search: the table sees one hash. */
const COLLIDING = ['prototypes/1/r1/pages/page29685295.json', 'prototypes/1/r1/pages/page32060020.json'] as const;

describe('ZipWriter', () => {
  it('streams an entry of unknown length and counts entries and bytes as it goes', async () => {
    const dest = join(dir, 'stream.zip');
    const writer = await ZipWriter.create(dest);
    await writer.addBuffer({ name: 'a.json', store: false }, Buffer.from('{}'));
    expect(writer.entries).toBe(1);
    const before = writer.bytes;
    async function* chunks(): AsyncGenerator<Buffer | string> {
      for (let i = 0; i < 5000; i += 1) yield i % 2 ? `{"i":${i}},` : Buffer.from(`"é${i}",`);
    }
    await writer.addStream({ name: 'manifest.json' }, chunks());
    expect(writer.entries).toBe(2);
    expect(writer.bytes).toBeGreaterThan(before);
    const result = await writer.finish();
    expect(result).toEqual({ bytes: (await stat(dest)).size, entries: 2 });
    const expected = Array.from({ length: 5000 }, (_, i) => (i % 2 ? `{"i":${i}},` : `"é${i}",`)).join('');
    expect((await readBack(dest, 'manifest.json')).toString('utf8')).toBe(expected);
  });

  it('adds a range of a file, stored or deflated', async () => {
    const png = pngLike(2 * 1024 * 1024 + 5);
    const text = Buffer.from('{"a":"b"}\n'.repeat(10_000));
    const pack = join(dir, 'pack');
    await writeFile(pack, Buffer.concat([Buffer.from('junk'), png, text, Buffer.from('tail')]));
    const dest = join(dir, 'files.zip');
    const writer = await ZipWriter.create(dest);
    await writer.addFile({ name: 'p.png', store: true }, { file: pack, offset: 4, size: png.length });
    await writer.addFile({ name: 't.json', store: false }, { file: pack, offset: 4 + png.length, size: text.length });
    await writer.addFile({ name: 'empty.png', store: true }, { file: pack, size: 0 });
    await writer.finish();
    expect((await readBack(dest, 'p.png')).equals(png)).toBe(true);
    expect((await readBack(dest, 't.json')).equals(text)).toBe(true);
    expect((await readBack(dest, 'empty.png')).length).toBe(0);
  });

  it('refuses duplicate names with DUPLICATE_ENTRY, comparing real names when hashes collide', async () => {
    const [first, second] = COLLIDING;
    expect(ZipNameTable.hash(Buffer.from(first))).toBe(ZipNameTable.hash(Buffer.from(second)));
    const dest = join(dir, 'dup.zip');
    const writer = await ZipWriter.create(dest);
    await writer.addBuffer({ name: first, store: false }, Buffer.from('1'));
    // Enough entries after it that its central directory record is on disk, not in the batch.
    for (let i = 0; i < 20_000; i += 1) await writer.addBuffer({ name: `f/${i}`, store: true }, Buffer.from('x'));
    await writer.addBuffer({ name: second, store: false }, Buffer.from('2'));
    expect(await codeOf(writer.addBuffer({ name: first, store: false }, Buffer.from('again')))).toBe('DUPLICATE_ENTRY');
    expect(
      await codeOf(
        writer.addStream(
          { name: second },
          (async function* () {
            yield 'again';
          })(),
        ),
      ),
    ).toBe('DUPLICATE_ENTRY');
    expect(await codeOf(writer.addFile({ name: 'f/7', store: true }, { file: dest, size: 0 }))).toBe('DUPLICATE_ENTRY');
    // A refused name leaves nothing behind: the writer goes on.
    await writer.addBuffer({ name: 'last.json', store: false }, Buffer.from('3'));
    expect((await writer.finish()).entries).toBe(20_003);
    expect((await readBack(dest, first)).toString()).toBe('1');
    expect((await readBack(dest, second)).toString()).toBe('2');
  });

  it("refuses on its own every name its reader refuses, and a caller's stricter rule too; the writer goes on", async () => {
    const dest = join(dir, 'names.zip');
    const stricter = new RabbitError('BAD_ID', 'no spaces here', { source: 'a b.json' });
    const writer = await ZipWriter.create(dest, {
      checkName: (name) => {
        if (name.includes(' ')) throw stricter;
      },
    });
    for (const name of ['../evil.json', 'x/../y.json', '/etc/passwd', 'C:/boot.ini', 'a\\b.json'])
      expect([name, await codeOf(writer.addBuffer({ name, store: false }, Buffer.from('x')))]).toEqual([
        name,
        'BAD_ID',
      ]);
    await expect(writer.addBuffer({ name: 'a b.json', store: true }, Buffer.from('x'))).rejects.toBe(stricter);
    await writer.addBuffer({ name: 'kept.json', store: false }, Buffer.from('{}'));
    expect(await writer.finish()).toMatchObject({ entries: 1 });
    expect([...(await zipLayout(dest)).keys()]).toEqual(['kept.json']);
    expect(await leftovers()).toEqual([]);
  });

  it('abort removes the temp files and publishes nothing; it is safe to call again', async () => {
    const dest = join(dir, 'aborted.zip');
    const writer = await ZipWriter.create(dest);
    await writer.addBuffer({ name: 'a.json', store: false }, Buffer.from('{}'));
    expect((await leftovers()).length).toBe(2); // the zip and its central directory spill
    await writer.abort();
    await writer.abort();
    expect(await leftovers()).toEqual([]);
    await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await codeOf(writer.addBuffer({ name: 'b.json', store: false }, Buffer.from('{}')))).toBe('INTERRUPTED');
  });

  it.each([
    {
      case: 'the signal fires while an entry streams',
      code: 'INTERRUPTED',
      run: async (writer: ZipWriter, controller: AbortController) =>
        writer.addStream(
          { name: 'm.json' },
          (async function* () {
            yield 'a';
            controller.abort();
            yield 'b';
          })(),
        ),
    },
    {
      case: 'the stream of an entry fails',
      code: 'BAD_JSON',
      run: async (writer: ZipWriter) =>
        writer.addStream(
          { name: 'm.json' },
          (async function* () {
            yield 'a';
            const { RabbitError } = await import('../../src/core/errors.js');
            throw new RabbitError('BAD_JSON', 'broken source');
          })(),
        ),
    },
    {
      case: 'a file is shorter than the size given',
      code: 'OUTPUT_UNWRITABLE',
      run: async (writer: ZipWriter) => {
        await writeFile(join(dir, 'short'), 'abc');
        await writer.addFile({ name: 's.png', store: true }, { file: join(dir, 'short'), size: 10 });
      },
    },
    {
      case: 'a file is missing',
      code: 'OUTPUT_UNWRITABLE',
      run: async (writer: ZipWriter) =>
        writer.addFile({ name: 's.json', store: false }, { file: join(dir, 'missing'), size: 10 }),
    },
  ])('cleans up after itself when $case', async ({ code, run }) => {
    const controller = new AbortController();
    const dest = join(dir, 'failed.zip');
    const writer = await ZipWriter.create(dest, { signal: controller.signal });
    await writer.addBuffer({ name: 'a.json', store: false }, Buffer.from('{}'));
    expect(await codeOf(run(writer, controller))).toBe(code);
    expect(await leftovers()).toEqual([]);
    expect(await codeOf(writer.finish())).toBe(code);
    await writer.abort();
    await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('abort during a call makes that call fail as interrupted and removes everything', async () => {
    const dest = join(dir, 'abort-during.zip');
    const writer = await ZipWriter.create(dest);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const streaming = writer.addStream(
      { name: 'm.json' },
      (async function* () {
        yield 'first';
        await gate;
        yield 'second';
      })(),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writer.abort();
    release();
    expect(await codeOf(streaming)).toBe('INTERRUPTED');
    expect(await leftovers()).toEqual([]);
    await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a second call while the first is still running', async () => {
    const writer = await ZipWriter.create(join(dir, 'busy.zip'));
    const first = writer.addBuffer({ name: 'a.json', store: false }, Buffer.from('{}'));
    await expect(writer.addBuffer({ name: 'b.json', store: false }, Buffer.from('{}'))).rejects.toThrow(
      /await each call/,
    );
    await first;
    await writer.abort();
  });
});

describe('output errors', () => {
  it.each([
    ['ENOSPC', 'DISK_FULL'],
    ['EDQUOT', 'DISK_FULL'],
    ['EACCES', 'OUTPUT_UNWRITABLE'],
    ['EROFS', 'OUTPUT_UNWRITABLE'],
    ['ENOENT', 'OUTPUT_UNWRITABLE'],
    ['EIO', 'OUTPUT_UNWRITABLE'],
  ])('%s becomes %s', (errno, code) => {
    expect(outputError(Object.assign(new Error(errno), { code: errno }), '/x.zip').code).toBe(code);
  });
});
