import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openZip } from '../../src/zip/zip-reader.js';
import { writeZip } from '../helpers/write-zip.js';
import { plainZip, type PlainEntry } from '../helpers/plain-zip.js';
import { isRabbitError } from '../../src/core/errors.js';
import { dataOffsetOf, flipByte } from './zip-bytes.js';
import { requireTool } from '../helpers/tools.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-index-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function drain(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const elementName = (i: number) =>
  `prototypes/1001/r3/pages/page${String(i >> 7).padStart(4, '0')}/elements/element${String(i).padStart(6, '0')}.json`;

describe('the compact zip index', () => {
  it.each([
    { label: 'every name colliding', hashName: () => 0 },
    { label: 'names colliding in pairs', hashName: (name: string) => name.length + (name.endsWith('b.json') ? 1 : 0) },
  ])('finds each entry by its real name with $label', async ({ hashName }) => {
    const entries: PlainEntry[] = ['a.json', 'b.json', 'ab.json', 'bb.json', 'dir/a.json', 'dir/ä.json'].map(
      (name, i) => ({
        name,
        data: Buffer.from(`{"n":${i}}`),
      }),
    );
    const path = join(dir, 'collide.zip');
    await writeFile(path, plainZip(entries));
    const reader = await openZip(path, { hashName });
    try {
      expect([...reader.entries.keys()]).toEqual(entries.map((e) => e.name));
      expect(reader.duplicates).toEqual([]);
      for (const { name, data } of entries) {
        expect(reader.entries.get(name)?.uncompressedSize, name).toBe(data.length);
        expect((await drain(await reader.openEntry(name))).equals(data), name).toBe(true);
      }
      expect(reader.entries.has('c.json')).toBe(false);
      expect(reader.entries.get('dir/b.json')).toBeUndefined();
    } finally {
      reader.close();
    }
  });

  it('tells a repeated name from a colliding one', async () => {
    const path = join(dir, 'repeat.zip');
    const entries = ['x.json', 'y.json', 'x.json', 'z.json'].map((name, i) => ({ name, data: Buffer.from(String(i)) }));
    await writeFile(path, plainZip(entries));
    const reader = await openZip(path, { hashName: () => 7 });
    try {
      expect(reader.duplicates).toEqual(['x.json']);
      expect([...reader.entries.keys()]).toEqual(['x.json', 'y.json', 'z.json']);
      expect(reader.entries.size).toBe(3);
      // The first of a repeated name is the one served.
      expect((await drain(await reader.openEntry('x.json'))).toString()).toBe('0');
    } finally {
      reader.close();
    }
  });

  it('reads a zip64 archive of more than 65,535 entries', async () => {
    const count = 70_000;
    const entries: PlainEntry[] = Array.from({ length: count }, (_, i) => ({
      name: elementName(i),
      data: Buffer.from(`{"i":${i}}`),
    }));
    const path = join(dir, 'big.zip');
    await writeFile(path, plainZip(entries, { zip64: true }));
    // Info-ZIP agrees the archive is sound, so the reader is tested against a real zip64 layout.
    requireTool('unzip');
    expect(execFileSync('unzip', ['-tqq', path], { encoding: 'utf8' })).toBe('');
    const reader = await openZip(path);
    try {
      expect(reader.index.count).toBe(count);
      expect(reader.entries.size).toBe(count);
      let listed = 0;
      let outOfOrder = 0;
      for (const name of reader.entries.keys()) if (name !== elementName(listed++)) outOfOrder++;
      expect({ listed, outOfOrder }).toEqual({ listed: count, outOfOrder: 0 });
      for (const i of [0, 1, 65_535, 65_536, count - 1]) {
        expect((await drain(await reader.openEntry(elementName(i)))).toString()).toBe(`{"i":${i}}`);
        expect(reader.entries.get(elementName(i))).toMatchObject({
          uncompressedSize: String(`{"i":${i}}`).length,
          compressionMethod: 0,
        });
      }
      expect(reader.entries.has(elementName(count))).toBe(false);
    } finally {
      reader.close();
    }
  });

  it('reads what the project writer writes, deflated entries larger than one read included', async () => {
    const big = Buffer.from('{"x":1}\n'.repeat(200_000));
    const path = join(dir, 'written.zip');
    await writeZip(
      [
        { name: 'big.json', data: big, store: false },
        { name: 'big.bin', data: big, store: true },
      ],
      path,
    );
    const reader = await openZip(path);
    try {
      expect((await drain(await reader.openEntry('big.json'))).equals(big)).toBe(true);
      expect((await drain(await reader.openEntry('big.bin'))).equals(big)).toBe(true);
    } finally {
      reader.close();
    }
    // Damage in the middle of a streamed (not one-shot) stored entry is caught by the CRC.
    await flipByte(path, (await dataOffsetOf(path, 'big.bin')) + 1_000_000);
    const damaged = await openZip(path);
    try {
      const error = await drain(await damaged.openEntry('big.bin')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRabbitError(error, 'ARCHIVE_CORRUPT')).toBe(true);
      expect((error as Error).message).toMatch(/big\.bin.*CRC/);
    } finally {
      damaged.close();
    }
  });
});
