import { readAtSync as readAt } from '../core/positional-io.js';
import {
  CENTRAL_HEADER_BYTES,
  CENTRAL_SIGNATURE,
  END_SIGNATURE,
  ZIP64_END_SIGNATURE,
  ZIP64_LOCATOR_SIGNATURE,
} from './zip-records.js';
import { unsafeNameReason } from './zip-names.js';

/**
 * The zip's table of contents read straight from the file (PKWARE APPNOTE 4.3.12, 4.3.14-16):
 * the end record, its zip64 counterpart, and central directory records one at a time through a
 * small window, so a directory of a million entries never sits in memory.
 */

export interface DirectoryEnd {
  /** Central directory records the end record announces. */
  count: number;
  offset: number;
  size: number;
}

export interface DirectoryRecord {
  name: string;
  /** Offset of the record itself in the file, to read it again later. */
  recordOffset: number;
  /** Bytes the record takes, so the next one starts right after. */
  recordLength: number;
  flags: number;
  compressionMethod: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
  /**
   * Where the entry's bytes must end: the next local header in the file, or the central directory
   * (set by the index, which knows every entry's offset). Data that runs past it is shared with
   * another entry or with the directory itself.
   */
  dataLimit?: number;
}

/** A structural fault in the directory; the reader turns it into ARCHIVE_CORRUPT or NOT_A_ZIP. */
export class DirectoryError extends Error {
  constructor(
    message: string,
    /** Set when the fault is an entry name that could escape the extract folder. */
    readonly unsafeName?: string,
    /** Set when there is no end record at all: not a zip, or one cut short, rather than a damaged one. */
    readonly noEndRecord = false,
    /** With unsafeName: the entry is refused for its type (a symlink, a device), not for its name. */
    readonly notAFile = false,
  ) {
    super(message);
  }
}

const EOCD_LENGTH = 22;
const MAX_COMMENT = 0xffff;
const UTF8_FLAG = 0x800;
/** Made-by host 3 is UNIX (4.4.2.2): the external attributes' high 16 bits are then st_mode. */
const HOST_UNIX = 3;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

export function readDirectoryEnd(fd: number, fileSize: number): DirectoryEnd {
  const tailLength = Math.min(fileSize, EOCD_LENGTH + MAX_COMMENT);
  const tail = readAt(fd, fileSize - tailLength, tailLength);
  let at = -1;
  for (let i = tail.length - EOCD_LENGTH; i >= 0; i--) {
    // The comment length must reach exactly to the end, or this is a signature inside a comment.
    if (tail.readUInt32LE(i) === END_SIGNATURE && i + EOCD_LENGTH + tail.readUInt16LE(i + 20) === tail.length) {
      at = i;
      break;
    }
  }
  if (at === -1) throw new DirectoryError('end of central directory record signature not found', undefined, true);
  const eocdOffset = fileSize - tailLength + at;
  let count = tail.readUInt16LE(at + 10);
  let size = tail.readUInt32LE(at + 12);
  let offset = tail.readUInt32LE(at + 16);
  if (tail.readUInt16LE(at + 4) !== 0 || tail.readUInt16LE(at + 6) !== 0) {
    throw new DirectoryError('multi-disk zip files are not supported');
  }
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    if (eocdOffset < 20) throw new DirectoryError('zip64 end of central directory locator is missing');
    const locator = readAt(fd, eocdOffset - 20, 20);
    if (locator.readUInt32LE(0) !== ZIP64_LOCATOR_SIGNATURE) {
      throw new DirectoryError('zip64 end of central directory locator signature not found');
    }
    const recordOffset = readUint64(locator, 8);
    if (recordOffset + 56 > eocdOffset)
      throw new DirectoryError('zip64 end of central directory record is out of range');
    const record = readAt(fd, recordOffset, 56);
    if (record.readUInt32LE(0) !== ZIP64_END_SIGNATURE) {
      throw new DirectoryError('invalid zip64 end of central directory record signature');
    }
    count = readUint64(record, 32);
    size = readUint64(record, 40);
    offset = readUint64(record, 48);
  }
  if (offset + size > eocdOffset) throw new DirectoryError('central directory runs past its end record');
  // A record takes at least 46 bytes: a count that cannot fit is a lie we must not allocate for.
  if (count * CENTRAL_HEADER_BYTES > size)
    throw new DirectoryError(`${count} entries cannot fit in a ${size}-byte central directory`);
  return { count, offset, size };
}

/** Parses the central directory record starting at `start` of `buffer` (which sits at `fileOffset`). */
export function parseRecord(buffer: Buffer, start: number, fileOffset: number): DirectoryRecord | number {
  if (buffer.length - start < CENTRAL_HEADER_BYTES) return CENTRAL_HEADER_BYTES;
  if (buffer.readUInt32LE(start) !== CENTRAL_SIGNATURE)
    throw new DirectoryError('invalid central directory file header signature');
  const nameLength = buffer.readUInt16LE(start + 28);
  const extraLength = buffer.readUInt16LE(start + 30);
  const commentLength = buffer.readUInt16LE(start + 32);
  const recordLength = CENTRAL_HEADER_BYTES + nameLength + extraLength + commentLength;
  if (buffer.length - start < recordLength) return recordLength;
  const flags = buffer.readUInt16LE(start + 8);
  const nameStart = start + CENTRAL_HEADER_BYTES;
  const name = decodeName(buffer.subarray(nameStart, nameStart + nameLength), flags);
  const record: DirectoryRecord = {
    name,
    recordOffset: fileOffset,
    recordLength,
    flags,
    compressionMethod: buffer.readUInt16LE(start + 10),
    crc32: buffer.readUInt32LE(start + 16),
    compressedSize: buffer.readUInt32LE(start + 20),
    uncompressedSize: buffer.readUInt32LE(start + 24),
    localHeaderOffset: buffer.readUInt32LE(start + 42),
  };
  applyZip64(record, buffer, nameStart + nameLength, nameStart + nameLength + extraLength);
  checkName(name);
  checkType(name, buffer.readUInt8(start + 5), buffer.readUInt32LE(start + 38) >>> 16);
  return record;
}

/** The zip64 extra field (0x0001) holds, in this order, only the fields whose 32-bit slot is all ones. */
function applyZip64(record: DirectoryRecord, extra: Buffer, from: number, to: number): void {
  if (
    record.uncompressedSize !== 0xffffffff &&
    record.compressedSize !== 0xffffffff &&
    record.localHeaderOffset !== 0xffffffff
  )
    return;
  for (let at = from; at + 4 <= to;) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    const end = at + 4 + length;
    if (end > to) break;
    if (id === 0x0001) {
      let field = at + 4;
      for (const key of ['uncompressedSize', 'compressedSize', 'localHeaderOffset'] as const) {
        if (record[key] !== 0xffffffff) continue;
        if (field + 8 > end)
          throw new DirectoryError(`zip64 extended information extra field is too short for ${record.name}`);
        record[key] = readUint64(extra, field);
        field += 8;
      }
      return;
    }
    at = end;
  }
  throw new DirectoryError(`expected zip64 extended information extra field for ${record.name}`);
}

function checkName(name: string): void {
  const reason = unsafeNameReason(name);
  if (reason !== undefined) throw new DirectoryError(reason, name);
}

/**
 * unzip, bsdtar and Python's zipfile recreate a UNIX entry's type from its mode: a symlink entry
 * whose content is `/etc/passwd` extracts as a link to it. Only files and folders are data; a mode
 * without type bits (some tools set only permissions) says nothing and is taken as a file.
 */
function checkType(name: string, host: number, mode: number): void {
  if (host !== HOST_UNIX) return;
  const type = mode & S_IFMT;
  if (type === 0 || type === S_IFREG || type === S_IFDIR) return;
  const what = type === 0o120000 ? 'a symbolic link' : `a special file (mode ${mode.toString(8)})`;
  throw new DirectoryError(what, name, false, true);
}

function readUint64(buffer: Buffer, at: number): number {
  const high = buffer.readUInt32LE(at + 4);
  if (high >= 0x200000) throw new DirectoryError('a zip64 field is larger than this tool can address');
  return high * 0x100000000 + buffer.readUInt32LE(at);
}

const CP437 =
  '\u0000☺☻♥♦♣♠•◘○◙♂♀♪♫☼►◄↕‼¶§▬↨↑↓→←∟↔▲▼ !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~⌂ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■ ';

/** A record's name as its flags say it is written: UTF-8 with bit 11, else CP437 (APPNOTE 4.4.4, appendix D). */
export function decodeName(bytes: Buffer, flags: number): string {
  return flags & UTF8_FLAG ? bytes.toString('utf8') : decodeCp437(bytes);
}

/** Names without the UTF-8 flag are CP437 by the APPNOTE; plain ASCII reads the same either way. */
function decodeCp437(bytes: Buffer): string {
  let ascii = true;
  for (const byte of bytes) if (byte >= 0x80) ascii = false;
  if (ascii) return bytes.toString('latin1');
  let out = '';
  for (const byte of bytes) out += CP437[byte];
  return out;
}

/**
 * Central directory records front to back through one reused window; each record is handed out
 * before the next is read, so nothing accumulates. (A fresh megabyte per refill would leave the
 * allocator holding a hundred of them by the end of a million-entry directory.)
 */
export function* scanDirectory(fd: number, end: DirectoryEnd, windowBytes = 1 << 20): Generator<DirectoryRecord> {
  let buffer = Buffer.allocUnsafe(Math.min(windowBytes, end.size));
  let window: Buffer = buffer.subarray(0, 0);
  let windowOffset = end.offset;
  let at = 0;
  const stop = end.offset + end.size;
  for (let i = 0; i < end.count; i++) {
    let parsed = parseRecord(window, at, windowOffset + at);
    if (typeof parsed === 'number') {
      const from = windowOffset + at;
      const length = Math.min(Math.max(windowBytes, parsed), stop - from);
      if (length > buffer.length) buffer = Buffer.allocUnsafe(length);
      window = readAt(fd, from, length, buffer.subarray(0, length));
      windowOffset = from;
      at = 0;
      parsed = parseRecord(window, 0, from);
      if (typeof parsed === 'number')
        throw new DirectoryError(`central directory ends inside record ${i + 1} of ${end.count}`);
    }
    at += parsed.recordLength;
    yield parsed;
  }
}
