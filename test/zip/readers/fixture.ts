import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ZipWriter } from '../../../src/zip/zip-writer.js';

export interface ExpectedEntry {
  name: string;
  bytes: Buffer;
  method: 0 | 8;
}

/** A PNG signature followed by noise: incompressible, like the real renderings. */
export function pngLike(size: number): Buffer {
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(size - 8)]);
}

/**
 * An archive with every kind of entry the export writes: small bodies in memory (deflated JSON,
 * stored PNG, empty ones), large stored PNGs and a deflated body streamed from a spool pack at an
 * offset (addFile), and a manifest of ~2 MB streamed in string and Buffer chunks (addStream).
 */
export async function writeFixture(dir: string): Promise<{ path: string; expected: ExpectedEntry[] }> {
  const expected: ExpectedEntry[] = [];
  const path = join(dir, 'fixture.zip');
  const writer = await ZipWriter.create(path);

  const page = Buffer.from(JSON.stringify({ id: 'page0001', name: 'Startseite ✓ 🐇', layers: ['layer5'] }, null, 2));
  const small: ExpectedEntry[] = [
    { name: 'prototypes.json', bytes: Buffer.from('[{"id":4711}]'), method: 8 },
    { name: 'prototypes/4711/r17/pages/page0001.json', bytes: page, method: 8 },
    { name: 'prototypes/4711/r17/pages/page0001.png', bytes: pngLike(3000), method: 0 },
    { name: 'prototypes/4711/r17/empty.json', bytes: Buffer.alloc(0), method: 8 },
    { name: 'prototypes/4711/r17/empty.png', bytes: Buffer.alloc(0), method: 0 },
  ];
  for (const entry of small) {
    await writer.addBuffer(
      { name: entry.name, store: entry.method === 0, date: new Date(Date.UTC(2024, 1, 29, 13, 37, 42)) },
      entry.bytes,
    );
    expected.push(entry);
  }

  // Bodies as the spool keeps them: several in one pack file, each at its own offset.
  const bigPng = pngLike(3 * 1024 * 1024 + 123);
  const otherPng = pngLike(1024 * 1024 + 1);
  const text = Buffer.from('{"element":"button","label":"Weiter"}\n'.repeat(40_000));
  const pack = join(dir, 'pack.bin');
  const filler = randomBytes(777);
  await writeFile(pack, Buffer.concat([filler, bigPng, otherPng, text]));
  const files: Array<ExpectedEntry & { offset: number }> = [
    { name: 'prototypes/4711/r17/pages/page0002.png', bytes: bigPng, method: 0, offset: filler.length },
    {
      name: 'prototypes/4711/r17/pages/page0003.png',
      bytes: otherPng,
      method: 0,
      offset: filler.length + bigPng.length,
    },
    {
      name: 'prototypes/4711/r17/elements.json',
      bytes: text,
      method: 8,
      offset: filler.length + bigPng.length + otherPng.length,
    },
  ];
  for (const entry of files) {
    await writer.addFile(
      { name: entry.name, store: entry.method === 0 },
      { file: pack, offset: entry.offset, size: entry.bytes.length },
    );
    expected.push({ name: entry.name, bytes: entry.bytes, method: entry.method });
  }

  const lines = Array.from(
    { length: 20_000 },
    (_, i) => `    {"path":"prototypes/4711/r17/pages/page${i}.json","sha256":"${'ab'.repeat(32)}"},\n`,
  );
  async function* manifest(): AsyncGenerator<Buffer | string> {
    yield '{\n  "formatVersion": 1,\n  "files": [\n';
    for (let i = 0; i < lines.length; i += 1) yield i % 2 === 0 ? (lines[i] ?? '') : Buffer.from(lines[i] ?? '');
    yield '  ]\n}\n';
  }
  await writer.addStream({ name: 'manifest.json' }, manifest());
  expected.push({
    name: 'manifest.json',
    bytes: Buffer.from(`{\n  "formatVersion": 1,\n  "files": [\n${lines.join('')}  ]\n}\n`),
    method: 8,
  });

  await writer.finish();
  return { path, expected };
}
