import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openZip } from '../../src/zip/zip-reader.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { plainZip } from '../helpers/plain-zip.js';

/**
 * Zips made to cost their reader far more than their size: central directory records that all
 * point at one deflate stream (each inflating it again), and entries that inflate past the size
 * they declare. zlib is wrapped so the test counts every byte inflated: the bound is what the
 * directory declares, asserted in bytes, not in seconds or memory.
 */
const inflated = vi.hoisted(() => ({ bytes: 0 }));

vi.mock('node:zlib', async (importOriginal) => {
  const real = await importOriginal<typeof zlib>();
  return {
    ...real,
    inflateRawSync: (buffer: zlib.InputType, options?: zlib.ZlibOptions) => {
      const out = real.inflateRawSync(buffer, options);
      inflated.bytes += out.length;
      return out;
    },
    createInflateRaw: (options?: zlib.ZlibOptions) => {
      const stream = real.createInflateRaw(options);
      const push = stream.push.bind(stream);
      stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
        if (Buffer.isBuffer(chunk)) inflated.bytes += chunk.length;
        return push(chunk, encoding);
      };
      return stream;
    },
  };
});

const MiB = 1024 * 1024;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-zip-'));
  inflated.bytes = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Record {
  name: string;
  localHeaderOffset: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

/** A zip of one local entry (deflated `data`) and the central records given, built byte by byte. */
function craftedZip(localName: string, data: Buffer, records: (local: Omit<Record, 'name'>) => Record[]): Buffer {
  const compressed = zlib.deflateRawSync(data, { level: 9 });
  const name = Buffer.from(localName);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(zlib.crc32(data), 14);
  local.writeUInt32LE(compressed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(name.length, 26);
  const head = Buffer.concat([local, name, compressed]);
  const central = records({
    localHeaderOffset: 0,
    crc: zlib.crc32(data),
    compressedSize: compressed.length,
    uncompressedSize: data.length,
  }).map((record) => {
    const recordName = Buffer.from(record.name);
    const fixed = Buffer.alloc(46);
    fixed.writeUInt32LE(0x02014b50, 0);
    fixed.writeUInt16LE(20, 4);
    fixed.writeUInt16LE(20, 6);
    fixed.writeUInt16LE(8, 10);
    fixed.writeUInt32LE(record.crc, 16);
    fixed.writeUInt32LE(record.compressedSize, 20);
    fixed.writeUInt32LE(record.uncompressedSize, 24);
    fixed.writeUInt16LE(recordName.length, 28);
    fixed.writeUInt32LE(record.localHeaderOffset, 42);
    return Buffer.concat([fixed, recordName]);
  });
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(central.length, 8);
  end.writeUInt16LE(central.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(head.length, 16);
  return Buffer.concat([head, directory, end]);
}

describe('a zip crafted to cost its reader', () => {
  it('refuses central records that share one deflate stream: verify inflates it once', async () => {
    const data = Buffer.alloc(32 * MiB);
    const copies = 24;
    const path = join(dir, 'overlap.zip');
    await writeFile(
      path,
      craftedZip('e0.bin', data, (local) =>
        Array.from({ length: copies }, (_, i) => ({ ...local, name: `e${i}.bin` })),
      ),
    );
    const report = await verifyArchive(path);
    expect(report.ok).toBe(false);
    const refused = report.problems.filter((p) => p.kind === 'overlap');
    expect(refused.map((p) => p.path).sort()).toEqual(
      Array.from({ length: copies - 1 }, (_, i) => `e${i + 1}.bin`).sort(),
    );
    // The first record's data is its own and is read; the others' never reach zlib.
    expect(report.bytes).toBe(data.length);
    expect(inflated.bytes).toBeGreaterThanOrEqual(data.length);
    expect(inflated.bytes).toBeLessThanOrEqual(data.length + 1);
  });

  it('refuses a record pointing into the central directory', async () => {
    const path = join(dir, 'into-directory.zip');
    const zip = craftedZip('a.bin', Buffer.from('hello'), (local) => [
      { ...local, name: 'a.bin' },
      // The directory starts right after the one local entry: 30 + 5 + compressed bytes.
      { ...local, name: 'b.bin', localHeaderOffset: 30 + 5 + local.compressedSize },
    ]);
    await writeFile(path, zip);
    const reader = await openZip(path);
    try {
      const error = await reader.readEntry('b.bin').then(
        () => undefined,
        (e: unknown) => e as { code?: string; data?: { fault?: string } },
      );
      expect(error?.code).toBe('ARCHIVE_CORRUPT');
      expect(error?.data?.fault).toBe('overlap');
      expect((await reader.readEntry('a.bin')).toString()).toBe('hello');
    } finally {
      reader.close();
    }
  });

  it('reads every entry of a zip whose directory lists them out of file order', async () => {
    const entries = ['a', 'b', 'c', 'd', 'e'].map((name) => ({
      name: `${name}.txt`,
      data: Buffer.from(`${name}`.repeat(100)),
    }));
    const zip = plainZip(entries);
    // The directory's records, each 46 bytes and its name, written back in reverse order.
    const start = zip.readUInt32LE(zip.length - 22 + 16);
    const records: Buffer[] = [];
    for (let at = start; records.length < entries.length;) {
      const length = 46 + zip.readUInt16LE(at + 28);
      records.push(Buffer.from(zip.subarray(at, at + length)));
      at += length;
    }
    Buffer.concat(records.reverse()).copy(zip, start);
    const path = join(dir, 'reversed.zip');
    await writeFile(path, zip);
    const reader = await openZip(path);
    try {
      for (const { name, data } of entries) expect((await reader.readEntry(name)).equals(data), name).toBe(true);
    } finally {
      reader.close();
    }
  });

  it.each([
    { label: 'a small declared size (inflated in one call)', declared: 1000 },
    { label: 'a declared size past the one-call limit (streamed)', declared: 300 * 1024 },
  ])('stops inflating an entry at $label plus one byte', async ({ declared }) => {
    const data = Buffer.alloc(32 * MiB);
    const path = join(dir, 'bomb.zip');
    await writeFile(
      path,
      craftedZip('bomb.bin', data, (local) => [{ ...local, name: 'bomb.bin', uncompressedSize: declared }]),
    );
    const reader = await openZip(path);
    try {
      const error = await reader.readEntry('bomb.bin').then(
        () => undefined,
        (e: unknown) => e as { code?: string; data?: { fault?: string } },
      );
      expect(error?.code).toBe('ARCHIVE_CORRUPT');
      expect(error?.data?.fault).toBe('too-large');
    } finally {
      reader.close();
    }
    // One inflate chunk (64 KiB) past the declared size at most, never the 32 MiB the data holds.
    expect(inflated.bytes).toBeLessThanOrEqual(declared + 64 * 1024);
    const report = await verifyArchive(path);
    expect(report.problems.map((p) => `${p.kind} ${p.path ?? ''}`)).toEqual([
      'manifest-missing manifest.json',
      'too-large bomb.bin',
    ]);
  });
});
