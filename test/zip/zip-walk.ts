import { open, readFile } from 'node:fs/promises';

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

/**
 * Every local header in order, and where they end: the central directory's start, whose
 * signature is returned so a caller can check the walk stopped at it and not at garbage.
 */
export async function walkLocalHeaders(
  path: string,
): Promise<{ entries: LocalEntry[]; end: number; signatureAtEnd: number }> {
  const bytes = await readFile(path);
  const entries: LocalEntry[] = [];
  let at = 0;
  while (at + 30 <= bytes.length && bytes.readUInt32LE(at) === LOCAL) {
    const nameLength = bytes.readUInt16LE(at + 26);
    const extraLength = bytes.readUInt16LE(at + 28);
    const entry: LocalEntry = {
      name: bytes.toString('utf8', at + 30, at + 30 + nameLength),
      versionNeeded: bytes.readUInt16LE(at + 4),
      flags: bytes.readUInt16LE(at + 6),
      method: bytes.readUInt16LE(at + 8),
      crc: bytes.readUInt32LE(at + 14),
      compressedSize: bytes.readUInt32LE(at + 18),
      size: bytes.readUInt32LE(at + 22),
      headerOffset: at,
      dataOffset: at + 30 + nameLength + extraLength,
      zip64: false,
    };
    readZip64Sizes(entry, bytes.subarray(at + 30 + nameLength, entry.dataOffset));
    if (entry.flags & 0x0008)
      throw new Error(`${entry.name}: data descriptor flag set; sizes are not in the local header`);
    entries.push(entry);
    at = entry.dataOffset + entry.compressedSize;
  }
  return { entries, end: at, signatureAtEnd: at + 4 <= bytes.length ? bytes.readUInt32LE(at) : 0 };
}

/** The entry's raw (possibly deflated) data, located from its local header alone. */
export async function localData(path: string, entry: LocalEntry): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const out = Buffer.alloc(entry.compressedSize);
    const { bytesRead } = await file.read(out, 0, out.length, entry.dataOffset);
    return out.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

export { CENTRAL as CENTRAL_SIGNATURE };

function readZip64Sizes(entry: LocalEntry, extra: Buffer): void {
  for (let at = 0; at + 4 <= extra.length;) {
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
