/**
 * The byte layout of a zip's records, after PKWARE's APPNOTE 6.3.x (sections 4.3.7 local file
 * header, 4.3.12 central directory header, 4.3.14-4.3.16 end records, 4.5.3 zip64 extra field).
 * Pure encoders: no I/O, identical bytes for identical input.
 */

/** A 32-bit size or offset field at this value means "see the zip64 extra field". */
export const ZIP64_LIMIT = 0xffffffff;
/** A 16-bit entry count at this value means "see the zip64 end record". */
const ZIP64_COUNT_LIMIT = 0xffff;

/** Record signatures, shared by the writer and the readers (zip-directory, zip-reader). */
export const LOCAL_SIGNATURE = 0x04034b50;
export const CENTRAL_SIGNATURE = 0x02014b50;
export const ZIP64_END_SIGNATURE = 0x06064b50;
export const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
export const END_SIGNATURE = 0x06054b50;

export const LOCAL_HEADER_BYTES = 30;
export const CENTRAL_HEADER_BYTES = 46;
/** Header id, length, then both sizes: 4.5.3 says a local zip64 extra carries both or neither. */
const ZIP64_LOCAL_EXTRA_BYTES = 20;
const ZIP64_EXTRA_ID = 0x0001;

/** 2.0: deflate; 4.5: zip64 (4.4.3.2). */
const VERSION_DEFLATE = 20;
const VERSION_ZIP64 = 45;
/** Made by: host 3 (UNIX) so that readers apply the mode in the external attributes. */
const VERSION_MADE_BY = (3 << 8) | VERSION_ZIP64;
/** Bit 11: names are UTF-8. Bit 3 (data descriptor) is never set: sizes are in every header. */
const FLAG_UTF8 = 0x0800;
/** A regular file, rw-r--r--, in the high 16 bits as UNIX hosts expect. */
const EXTERNAL_ATTRIBUTES = (0o100644 << 16) >>> 0;

export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;

export interface EntryRecord {
  /** The entry name, UTF-8. */
  name: Buffer;
  method: typeof METHOD_STORE | typeof METHOD_DEFLATE;
  /** MS-DOS time and date words (see dosDateTime). */
  time: number;
  date: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** Offset of the local header from the start of the archive. */
  offset: number;
  /**
   * The local header carries a zip64 extra with both sizes and 0xFFFFFFFF in the 32-bit fields.
   * Decided before the data is written (an entry that might reach 4 GiB), so the header's length
   * never changes when its sizes are patched in afterwards.
   */
  zip64Local: boolean;
}

/** MS-DOS date and time (4.4.6) from the UTC fields, so the bytes do not depend on the machine's zone. */
export function dosDateTime(when: Date): { time: number; date: number } {
  const year = when.getUTCFullYear();
  // The format covers 1980-2107 with 2-second steps; clamp rather than wrap around.
  if (year < 1980) return { time: 0, date: (1 << 5) | 1 };
  if (year > 2107) return { time: (23 << 11) | (59 << 5) | 29, date: (127 << 9) | (12 << 5) | 31 };
  return {
    time: (when.getUTCHours() << 11) | (when.getUTCMinutes() << 5) | (when.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((when.getUTCMonth() + 1) << 5) | when.getUTCDate(),
  };
}

export function localHeaderBytes(entry: Pick<EntryRecord, 'name' | 'zip64Local'>): number {
  return LOCAL_HEADER_BYTES + entry.name.length + (entry.zip64Local ? ZIP64_LOCAL_EXTRA_BYTES : 0);
}

/** 4.3.7, as a buffer of its own: to rewrite a header once the CRC and sizes of its data are known. */
export function encodeLocalHeader(entry: EntryRecord): Buffer {
  const out = Buffer.alloc(localHeaderBytes(entry));
  writeLocalHeader(entry, out, 0);
  return out;
}

/**
 * 4.3.7, written at `start` of `target` (straight into the output batch: a buffer per record
 * would cost more in garbage collection than the encoding itself).
 */
export function writeLocalHeader(entry: EntryRecord, target: Buffer, start: number): void {
  if (!entry.zip64Local && (entry.size >= ZIP64_LIMIT || entry.compressedSize >= ZIP64_LIMIT)) {
    throw new RangeError(`zip entry ${entry.name.toString()} outgrew the 32-bit sizes of its local header`);
  }
  target.writeUInt32LE(LOCAL_SIGNATURE, start);
  target.writeUInt16LE(versionNeeded(entry, false), start + 4);
  target.writeUInt16LE(FLAG_UTF8, start + 6);
  target.writeUInt16LE(entry.method, start + 8);
  target.writeUInt16LE(entry.time, start + 10);
  target.writeUInt16LE(entry.date, start + 12);
  target.writeUInt32LE(entry.crc >>> 0, start + 14);
  target.writeUInt32LE(entry.zip64Local ? ZIP64_LIMIT : entry.compressedSize, start + 18);
  target.writeUInt32LE(entry.zip64Local ? ZIP64_LIMIT : entry.size, start + 22);
  target.writeUInt16LE(entry.name.length, start + 26);
  target.writeUInt16LE(entry.zip64Local ? ZIP64_LOCAL_EXTRA_BYTES : 0, start + 28);
  entry.name.copy(target, start + LOCAL_HEADER_BYTES);
  if (entry.zip64Local) {
    const at = LOCAL_HEADER_BYTES + entry.name.length;
    target.writeUInt16LE(ZIP64_EXTRA_ID, start + at);
    target.writeUInt16LE(16, start + at + 2);
    writeUInt64(target, entry.size, start + at + 4);
    writeUInt64(target, entry.compressedSize, start + at + 12);
  }
}

/**
 * 4.3.12. The zip64 extra holds only the fields whose 32-bit slot overflowed, in the fixed order
 * size, compressed size, offset (4.5.3).
 */
export function centralHeaderBytes(entry: EntryRecord): number {
  return CENTRAL_HEADER_BYTES + entry.name.length + zip64CentralExtraBytes(entry);
}

function zip64CentralExtraBytes(entry: EntryRecord): number {
  const wide =
    (entry.size >= ZIP64_LIMIT ? 1 : 0) +
    (entry.compressedSize >= ZIP64_LIMIT ? 1 : 0) +
    (entry.offset >= ZIP64_LIMIT ? 1 : 0);
  return wide > 0 ? 4 + 8 * wide : 0;
}

/** 4.3.12, written at `start` of `target`. */
export function writeCentralHeader(entry: EntryRecord, target: Buffer, start: number): void {
  const extraBytes = zip64CentralExtraBytes(entry);
  target.writeUInt32LE(CENTRAL_SIGNATURE, start);
  target.writeUInt16LE(VERSION_MADE_BY, start + 4);
  target.writeUInt16LE(versionNeeded(entry, extraBytes > 0), start + 6);
  target.writeUInt16LE(FLAG_UTF8, start + 8);
  target.writeUInt16LE(entry.method, start + 10);
  target.writeUInt16LE(entry.time, start + 12);
  target.writeUInt16LE(entry.date, start + 14);
  target.writeUInt32LE(entry.crc >>> 0, start + 16);
  target.writeUInt32LE(Math.min(entry.compressedSize, ZIP64_LIMIT), start + 20);
  target.writeUInt32LE(Math.min(entry.size, ZIP64_LIMIT), start + 24);
  target.writeUInt16LE(entry.name.length, start + 28);
  target.writeUInt16LE(extraBytes, start + 30);
  // The target may be a reused batch: every field is written, zeros included.
  target.writeUInt16LE(0, start + 32); // comment length
  target.writeUInt16LE(0, start + 34); // disk number start
  target.writeUInt16LE(0, start + 36); // internal attributes
  target.writeUInt32LE(EXTERNAL_ATTRIBUTES, start + 38);
  target.writeUInt32LE(Math.min(entry.offset, ZIP64_LIMIT), start + 42);
  entry.name.copy(target, start + CENTRAL_HEADER_BYTES);
  if (extraBytes > 0) {
    let at = CENTRAL_HEADER_BYTES + entry.name.length;
    target.writeUInt16LE(ZIP64_EXTRA_ID, start + at);
    target.writeUInt16LE(extraBytes - 4, start + at + 2);
    at += 4;
    for (const value of [entry.size, entry.compressedSize, entry.offset]) {
      if (value < ZIP64_LIMIT) continue;
      writeUInt64(target, value, start + at);
      at += 8;
    }
  }
}

/**
 * The records after the central directory: the zip64 end record and its locator (4.3.14, 4.3.15)
 * when a count, size or offset does not fit the classic end record (4.3.16), which always comes
 * last. Overflowing classic fields hold all ones, the others their true values.
 */
export function encodeEndRecords(entries: number, directoryOffset: number, directoryBytes: number): Buffer {
  const zip64 = entries >= ZIP64_COUNT_LIMIT || directoryOffset >= ZIP64_LIMIT || directoryBytes >= ZIP64_LIMIT;
  const out = Buffer.alloc((zip64 ? 56 + 20 : 0) + 22);
  let at = 0;
  if (zip64) {
    out.writeUInt32LE(ZIP64_END_SIGNATURE, 0);
    writeUInt64(out, 56 - 12, 4); // size of the record after this field
    out.writeUInt16LE(VERSION_MADE_BY, 12);
    out.writeUInt16LE(VERSION_ZIP64, 14);
    // number of this disk, disk where the central directory starts: 0 (Buffer.alloc)
    writeUInt64(out, entries, 24);
    writeUInt64(out, entries, 32);
    writeUInt64(out, directoryBytes, 40);
    writeUInt64(out, directoryOffset, 48);
    out.writeUInt32LE(ZIP64_LOCATOR_SIGNATURE, 56);
    // disk with the zip64 end record: 0
    writeUInt64(out, directoryOffset + directoryBytes, 64);
    out.writeUInt32LE(1, 72); // total number of disks
    at = 76;
  }
  out.writeUInt32LE(END_SIGNATURE, at);
  // number of this disk, disk where the central directory starts: 0
  out.writeUInt16LE(Math.min(entries, ZIP64_COUNT_LIMIT), at + 8);
  out.writeUInt16LE(Math.min(entries, ZIP64_COUNT_LIMIT), at + 10);
  out.writeUInt32LE(Math.min(directoryBytes, ZIP64_LIMIT), at + 12);
  out.writeUInt32LE(Math.min(directoryOffset, ZIP64_LIMIT), at + 16);
  // comment length: 0
  return out;
}

function versionNeeded(entry: EntryRecord, centralZip64: boolean): number {
  return entry.zip64Local || centralZip64 ? VERSION_ZIP64 : VERSION_DEFLATE;
}

/** Sizes and offsets are JS numbers: exact up to 2^53, far beyond any archive we write. */
function writeUInt64(out: Buffer, value: number, at: number): void {
  out.writeUInt32LE(value % 0x100000000, at);
  out.writeUInt32LE(Math.floor(value / 0x100000000), at + 4);
}
