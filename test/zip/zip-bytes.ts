import { readFile, writeFile } from 'node:fs/promises';
import yauzl from 'yauzl';

/**
 * Byte-level surgery on zips written by writeZip, to build the damaged archives the reader and the
 * verifier must survive. The offsets come from yauzl, not from our own reader, so a bug in the
 * reader cannot hide itself.
 */

/** Absolute offset of an entry's first data byte, from its local header. */
export async function dataOffsetOf(zipPath: string, name: string): Promise<number> {
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName === name) {
        const header = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
        return header.fileDataStart;
      }
    }
  } finally {
    zip.close();
  }
  throw new Error(`no entry ${name} in ${zipPath}`);
}

export async function flipByte(path: string, offset: number): Promise<void> {
  const bytes = await readFile(path);
  if (offset >= bytes.length) throw new Error(`offset ${offset} is past the end of ${path}`);
  bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
  await writeFile(path, bytes);
}

/** Replaces every occurrence of `from` (local header and central directory alike) by `to`, same length. */
export async function renameInPlace(path: string, from: string, to: string): Promise<void> {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('names must have the same length');
  const bytes = await readFile(path);
  const needle = Buffer.from(from);
  let hits = 0;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) {
    Buffer.from(to).copy(bytes, at);
    hits += 1;
  }
  if (hits === 0) throw new Error(`${from} not found in ${path}`);
  await writeFile(path, bytes);
}

export async function truncate(path: string, keep: number): Promise<void> {
  const bytes = await readFile(path);
  await writeFile(path, bytes.subarray(0, keep));
}
