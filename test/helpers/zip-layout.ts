import { open } from 'node:fs/promises';
import yauzl from 'yauzl';

/** What the central directory says of one entry: equal layouts mean equal entry bytes and dates. */
export interface EntryLayout {
  name: string;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  compressionMethod: number;
  lastModFileTime: number;
  lastModFileDate: number;
  /** Where the entry's data starts in the file. */
  dataOffset: number;
}

export async function zipLayout(path: string): Promise<Map<string, EntryLayout>> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  const handle = await open(path, 'r');
  try {
    const out = new Map<string, EntryLayout>();
    for await (const entry of zip.eachEntry()) {
      const header = Buffer.alloc(30);
      await handle.read(header, 0, 30, entry.relativeOffsetOfLocalHeader);
      const dataOffset = entry.relativeOffsetOfLocalHeader + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
      out.set(entry.fileName, {
        name: entry.fileName,
        crc32: entry.crc32,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        compressionMethod: entry.compressionMethod,
        lastModFileTime: entry.lastModFileTime,
        lastModFileDate: entry.lastModFileDate,
        dataOffset,
      });
    }
    return out;
  } finally {
    await handle.close();
    zip.close();
  }
}

/** Flips one byte in the middle of an entry's stored data, leaving the zip's structure intact. */
export async function flipEntryByte(path: string, name: string): Promise<void> {
  const entry = (await zipLayout(path)).get(name);
  if (!entry || entry.compressedSize === 0) throw new Error(`no data to damage in ${name}`);
  const handle = await open(path, 'r+');
  try {
    const at = entry.dataOffset + Math.floor(entry.compressedSize / 2);
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, at);
    byte[0] = (byte[0] as number) ^ 0xff;
    await handle.write(byte, 0, 1, at);
  } finally {
    await handle.close();
  }
}
