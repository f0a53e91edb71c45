import { open } from 'node:fs/promises';

/**
 * Walks a zip's local headers front to back, WITHOUT the central directory, as streaming readers
 * (the JDK's ZipInputStream, bsdtar reading stdin) do: each header must announce its data's size
 * and CRC, since nothing else says where the next header starts. Written from APPNOTE 4.3.7 and
 * 4.5.3 independently of src/archive, so a shared misreading cannot hide itself.
 */
export interface LocalEntry {
  name: string;
  versionNeeded: number;
  flags: number;
  method: number;
  crc: number;
  size: number;
  compressedSize: number;
  /** Offset of the header, and of the entry's first data byte. */
  headerOffset: number;
  dataOffset: number;
  /** The local header had a zip64 extra field (sizes read from it). */
  zip64: boolean;
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;

/** Every local header in order, and the offset where they end (the central directory's start). */
export async function walkLocalHeaders(path: string): Promise<{ entries: LocalEntry[]; end: number; signatureAtEnd: number }> {
  const file = await open(path, 'r');
  try {
    const entries: LocalEntry[] = [];
    let at = 0;
    for (;;) {
      const fixed = await readAt(file, at, 30);
      const signature = fixed.length >= 4 ? fixed.readUInt32LE(0) : 0;
      if (signature !== LOCAL) return { entries, end: at, signatureAtEnd: signature };
      const nameLength = fixed.readUInt16LE(26);
      const extraLength = fixed.readUInt16LE(28);
      const variable = await readAt(file, at + 30, nameLength + extraLength);
      const entry: LocalEntry = {
        name: variable.subarray(0, nameLength).toString('utf8'),
        versionNeeded: fixed.readUInt16LE(4),
        flags: fixed.readUInt16LE(6),
        method: fixed.readUInt16LE(8),
        crc: fixed.readUInt32LE(14),
        compressedSize: fixed.readUInt32LE(18),
        size: fixed.readUInt32LE(22),
        headerOffset: at,
        dataOffset: at + 30 + nameLength + extraLength,
        zip64: false,
      };
      readZip64Sizes(entry, variable.subarray(nameLength));
      if (entry.flags & 0x0008) throw new Error(`${entry.name}: data descriptor flag set; sizes are not in the local header`);
      entries.push(entry);
      at = entry.dataOffset + entry.compressedSize;
    }
  } finally {
    await file.close();
  }
}

/** The entry's raw (possibly deflated) data, located from its local header alone. */
export async function localData(path: string, entry: LocalEntry): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    return await readAt(file, entry.dataOffset, entry.compressedSize);
  } finally {
    await file.close();
  }
}

export { CENTRAL as CENTRAL_SIGNATURE };

function readZip64Sizes(entry: LocalEntry, extra: Buffer): void {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === 0x0001) {
      // 4.5.3: in a local header the field holds both sizes, uncompressed first.
      if (entry.size !== 0xffffffff || entry.compressedSize !== 0xffffffff || length < 16) {
        throw new Error(`${entry.name}: zip64 extra without 0xFFFFFFFF sizes, or too short`);
      }
      entry.size = Number(extra.readBigUInt64LE(at + 4));
      entry.compressedSize = Number(extra.readBigUInt64LE(at + 12));
      entry.zip64 = true;
    }
    at += 4 + length;
  }
}

async function readAt(file: import('node:fs/promises').FileHandle, position: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(out, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return out.subarray(0, done);
}
