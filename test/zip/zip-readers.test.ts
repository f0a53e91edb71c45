import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { CENTRAL_SIGNATURE, localData, walkLocalHeaders } from './zip-walk.js';
import { writeFixture, type ExpectedEntry } from './readers/fixture.js';
import { tool } from './readers/run-tool.js';

/**
 * Our archives judged by readers we did not write: Info-ZIP, Python, 7-Zip, libarchive (bsdtar
 * reading stdin), the JDK's streaming ZipInputStream and yauzl, plus a walk of the local headers
 * alone. A reader that is not installed fails its test, naming the Debian package to install.
 */

let dir: string;
let zip: string;
let expected: ExpectedEntry[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-readers-'));
  ({ path: zip, expected } = await writeFixture(dir));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the archive as streaming readers see it', () => {
  it('has every entry size and CRC in its local header, found front to back without the central directory', async () => {
    const { entries, signatureAtEnd } = await walkLocalHeaders(zip);
    expect(entries.map((e) => e.name)).toEqual(expected.map((e) => e.name));
    expect(signatureAtEnd).toBe(CENTRAL_SIGNATURE);
    for (const [i, entry] of entries.entries()) {
      const want = expected[i] as ExpectedEntry;
      expect(entry.flags & 0x0008, `${entry.name}: no data descriptor`).toBe(0);
      expect(entry.flags & 0x0800, `${entry.name}: UTF-8 names`).toBe(0x0800);
      expect(entry.method, entry.name).toBe(want.method);
      expect(entry.size, entry.name).toBe(want.bytes.length);
      expect(entry.crc, entry.name).toBe(crc32(want.bytes));
      expect(entry.versionNeeded, entry.name).toBe(entry.zip64 ? 45 : 20);
      const raw = await localData(zip, entry);
      expect(raw.length, entry.name).toBe(entry.compressedSize);
      expect((want.method === 0 ? raw : inflateRawSync(raw)).equals(want.bytes), entry.name).toBe(true);
    }
    // The streamed manifest's length was unknown when its header was written: zip64 sizes.
    expect(entries.find((e) => e.name === 'manifest.json')?.zip64).toBe(true);
    expect(entries.filter((e) => e.method === 0 && e.size > 1024 * 1024)).toHaveLength(2);
  });

  it('is read by the JDK ZipInputStream from a stream, with sizes and CRCs announced up front', async () => {
    const source = fileURLToPath(new URL('./readers/ZipStreamCheck.java', import.meta.url));
    const { stdout } = await tool('java', [source], { stdinFile: zip });
    const rows = stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows.map((r) => r[0])).toEqual(expected.map((e) => e.name));
    for (const [i, row] of rows.entries()) {
      const want = expected[i] as ExpectedEntry;
      const crc = String(crc32(want.bytes));
      const size = String(want.bytes.length);
      // name, method, announced size, announced compressed size, announced CRC, read size, read CRC
      expect([row[1], row[2], row[4], row[5], row[6]], want.name).toEqual([String(want.method), size, crc, size, crc]);
      expect(Number(row[3]), want.name).toBeGreaterThanOrEqual(0);
    }
  });

  it('is extracted by bsdtar reading stdin, byte for byte', async () => {
    const out = join(dir, 'bsdtar');
    await mkdir(out);
    await tool('bsdtar', ['-xf', '-', '-C', out], { stdinFile: zip });
    for (const want of expected)
      expect((await readFile(join(out, want.name))).equals(want.bytes), want.name).toBe(true);
  });
});

describe('the archive as central-directory readers see it', () => {
  it('passes Info-ZIP unzip -t', async () => {
    const { stdout } = await tool('unzip', ['-t', zip]);
    expect(stdout).toMatch(/No errors detected/);
    for (const want of expected) expect(stdout).toContain(`testing: ${want.name}`);
  });

  it("passes Python's zipfile testzip, with the expected names, sizes and CRCs", async () => {
    const script = [
      'import json, sys, zipfile',
      'with zipfile.ZipFile(sys.argv[1]) as z:',
      '    print(json.dumps({"bad": z.testzip(), "entries": [[i.filename, i.file_size, i.CRC, i.compress_type] for i in z.infolist()]}))',
    ].join('\n');
    const { stdout } = await tool('python3', ['-c', script, zip]);
    const result = JSON.parse(stdout) as { bad: string | null; entries: Array<[string, number, number, number]> };
    expect(result.bad).toBeNull();
    expect(result.entries).toEqual(expected.map((e) => [e.name, e.bytes.length, crc32(e.bytes), e.method]));
  });

  it('passes 7-Zip 7z t', async () => {
    const { stdout } = await tool('7z', ['t', zip]);
    expect(stdout).toMatch(/Everything is Ok/);
    expect(stdout).toMatch(new RegExp(`Files: ${expected.length}\\b`));
  });

  it('is read by yauzl entry by entry, byte for byte', async () => {
    const reader = await yauzl.openPromise(zip, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
    try {
      const seen: string[] = [];
      for await (const entry of reader.eachEntry()) {
        const want = expected[seen.length] as ExpectedEntry;
        seen.push(entry.fileName);
        expect([entry.fileName, entry.uncompressedSize, entry.crc32, entry.compressionMethod]).toEqual([
          want.name,
          want.bytes.length,
          crc32(want.bytes),
          want.method,
        ]);
        const chunks: Buffer[] = [];
        for await (const chunk of await reader.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
        expect(Buffer.concat(chunks).equals(want.bytes), want.name).toBe(true);
      }
      expect(seen).toEqual(expected.map((e) => e.name));
    } finally {
      reader.close();
    }
  });
});
