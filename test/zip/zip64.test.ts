import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { ZipWriter } from '../../src/zip/zip-writer.js';
import { tool } from './readers/run-tool.js';
import { walkLocalHeaders } from './zip-walk.js';

/** More entries than the classic end record can count: the zip64 end record and locator must carry them. */
const COUNT = 65_600;
let dir: string;
let zip: string;
let expectedBytes = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip64-'));
  zip = join(dir, 'many.zip');
  const writer = await ZipWriter.create(zip);
  // One entry in 15 deflated, in every folder: some 4,400 of them for the readers to inflate. Each
  // deflated entry costs a compressor of its own, and the count, not the method, is what this file is about.
  for (let i = 0; i < COUNT; i += 1) {
    const body = Buffer.from(`{"n":${i}}`);
    expectedBytes += body.length;
    await writer.addBuffer({ name: `d${i % 16}/e${i}.json`, store: i % 15 !== 0 }, body);
  }
  expect(await writer.finish()).toMatchObject({ entries: COUNT });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe(`a zip of ${COUNT} entries`, () => {
  it('ends with a zip64 end record, its locator, and a classic end record whose count says "see zip64"', async () => {
    const file = await open(zip, 'r');
    try {
      const { size } = await file.stat();
      const tail = Buffer.alloc(22 + 20 + 56);
      await file.read(tail, 0, tail.length, size - tail.length);
      const record = tail.subarray(0, 56);
      const locator = tail.subarray(56, 76);
      const end = tail.subarray(76);
      expect(record.readUInt32LE(0)).toBe(0x06064b50);
      expect(record.readBigUInt64LE(4)).toBe(44n);
      expect(record.readUInt16LE(14)).toBe(45);
      expect(record.readBigUInt64LE(24)).toBe(BigInt(COUNT));
      expect(record.readBigUInt64LE(32)).toBe(BigInt(COUNT));
      const directoryBytes = Number(record.readBigUInt64LE(40));
      const directoryOffset = Number(record.readBigUInt64LE(48));
      expect(directoryOffset + directoryBytes).toBe(size - tail.length);
      expect(locator.readUInt32LE(0)).toBe(0x07064b50);
      expect(Number(locator.readBigUInt64LE(8))).toBe(size - tail.length);
      expect(locator.readUInt32LE(16)).toBe(1);
      expect(end.readUInt32LE(0)).toBe(0x06054b50);
      expect([end.readUInt16LE(8), end.readUInt16LE(10)]).toEqual([0xffff, 0xffff]);
      expect([end.readUInt32LE(12), end.readUInt32LE(16)]).toEqual([directoryBytes, directoryOffset]);
    } finally {
      await file.close();
    }
  });

  it('has all its local headers in a row', async () => {
    const { entries } = await walkLocalHeaders(zip);
    expect(entries).toHaveLength(COUNT);
    expect(entries[COUNT - 1]?.name).toBe(`d${(COUNT - 1) % 16}/e${COUNT - 1}.json`);
    // The readers below meet both methods: one entry in 15 deflated, the rest stored.
    expect(entries.filter((entry) => entry.method === 8)).toHaveLength(Math.ceil(COUNT / 15));
    expect(entries.filter((entry) => entry.method === 0)).toHaveLength(COUNT - Math.ceil(COUNT / 15));
  });

  it('passes unzip -t', async () => {
    const { stdout } = await tool('unzip', ['-tq', zip]);
    expect(stdout).toMatch(/No errors detected/);
  });

  it("passes Python's zipfile", async () => {
    const script = 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(z.testzip(), len(z.infolist()))';
    const { stdout } = await tool('python3', ['-c', script, zip]);
    expect(stdout.trim()).toBe(`None ${COUNT}`);
  });

  it('is read whole by bsdtar from stdin', async () => {
    const { stdoutBytes } = await tool('bsdtar', ['-xOf', '-'], { stdinFile: zip, countOnly: true });
    expect(stdoutBytes).toBe(expectedBytes);
  });

  it('is listed by yauzl', async () => {
    const reader = await yauzl.openPromise(zip, { lazyEntries: true, autoClose: false });
    try {
      expect(reader.entryCount).toBe(COUNT);
    } finally {
      reader.close();
    }
  });
});
