import { describe, expect, it } from 'vitest';
import {
  centralHeaderBytes,
  dosDateTime,
  encodeEndRecords,
  encodeLocalHeader,
  localHeaderBytes,
  writeCentralHeader,
  type EntryRecord,
} from '../../src/zip/zip-records.js';

/** One central directory record on its own (the writer encodes them into its batches). */
function encodeCentralHeader(entry: EntryRecord): Buffer {
  const out = Buffer.alloc(centralHeaderBytes(entry));
  writeCentralHeader(entry, out, 0);
  return out;
}

const GiB = 1024 ** 3;

function entry(overrides: Partial<EntryRecord>): EntryRecord {
  return {
    name: Buffer.from('a/b.png'),
    method: 0,
    time: 0,
    date: 33,
    crc: 0xdeadbeef,
    compressedSize: 10,
    size: 10,
    offset: 0,
    zip64Local: false,
    ...overrides,
  };
}

/** The zip64 extra field (id 1) of a record, as a list of its 8-byte values. */
function zip64Values(record: Buffer, extraStart: number, extraLength: number): bigint[] | undefined {
  for (let at = extraStart; at < extraStart + extraLength;) {
    const id = record.readUInt16LE(at);
    const length = record.readUInt16LE(at + 2);
    if (id === 1) return Array.from({ length: length / 8 }, (_, i) => record.readBigUInt64LE(at + 4 + 8 * i));
    at += 4 + length;
  }
  return undefined;
}

describe('central directory headers (APPNOTE 4.3.12, 4.5.3)', () => {
  it.each([
    { case: 'small entry', size: 10, compressedSize: 10, offset: 100, wide: undefined, version: 20 },
    {
      case: 'size over 4 GiB',
      size: 5 * GiB,
      compressedSize: 5 * GiB,
      offset: 100,
      wide: [5 * GiB, 5 * GiB],
      version: 45,
    },
    { case: 'offset over 4 GiB only', size: 10, compressedSize: 10, offset: 6 * GiB, wide: [6 * GiB], version: 45 },
    {
      case: 'size and offset',
      size: 5 * GiB,
      compressedSize: 3 * GiB,
      offset: 7 * GiB,
      wide: [5 * GiB, 7 * GiB],
      version: 45,
    },
    { case: 'exactly 0xFFFFFFFF', size: 0xffffffff, compressedSize: 1, offset: 0, wide: [0xffffffff], version: 45 },
  ])(
    '$case: zip64 extra holds only the overflowing fields, in order',
    ({ size, compressedSize, offset, wide, version }) => {
      const record = encodeCentralHeader(entry({ size, compressedSize, offset }));
      const nameLength = record.readUInt16LE(28);
      const extraLength = record.readUInt16LE(30);
      expect(record.readUInt32LE(0)).toBe(0x02014b50);
      expect(record.readUInt16LE(6)).toBe(version);
      expect(record.readUInt16LE(8)).toBe(0x0800);
      expect(record.readUInt32LE(16)).toBe(0xdeadbeef);
      expect(record.readUInt32LE(20)).toBe(Math.min(compressedSize, 0xffffffff));
      expect(record.readUInt32LE(24)).toBe(Math.min(size, 0xffffffff));
      expect(record.readUInt32LE(42)).toBe(Math.min(offset, 0xffffffff));
      expect(record.subarray(46, 46 + nameLength).toString()).toBe('a/b.png');
      expect(record.length).toBe(46 + nameLength + extraLength);
      expect(zip64Values(record, 46 + nameLength, extraLength)).toEqual(wide?.map(BigInt));
    },
  );
});

describe('local headers (APPNOTE 4.3.7)', () => {
  it('carries CRC and sizes directly when they fit', () => {
    const header = encodeLocalHeader(entry({ method: 8, size: 1000, compressedSize: 200 }));
    expect(header.length).toBe(localHeaderBytes(entry({})));
    expect([header.readUInt32LE(0), header.readUInt16LE(4), header.readUInt16LE(6), header.readUInt16LE(8)]).toEqual([
      0x04034b50, 20, 0x0800, 8,
    ]);
    expect([
      header.readUInt32LE(14),
      header.readUInt32LE(18),
      header.readUInt32LE(22),
      header.readUInt16LE(28),
    ]).toEqual([0xdeadbeef, 200, 1000, 0]);
  });

  it('with a reserved zip64 extra: all ones in the 32-bit fields, both sizes in the extra', () => {
    const header = encodeLocalHeader(entry({ zip64Local: true, size: 5 * GiB, compressedSize: 12 }));
    expect(header.length).toBe(30 + 7 + 20);
    expect([header.readUInt16LE(4), header.readUInt32LE(18), header.readUInt32LE(22), header.readUInt16LE(28)]).toEqual(
      [45, 0xffffffff, 0xffffffff, 20],
    );
    expect(zip64Values(header, 37, 20)).toEqual([BigInt(5 * GiB), 12n]);
  });

  it('refuses sizes that outgrew a header without zip64 rather than truncate them', () => {
    expect(() => encodeLocalHeader(entry({ size: 5 * GiB }))).toThrow(RangeError);
  });
});

describe('end records (APPNOTE 4.3.14-4.3.16)', () => {
  it.each([
    { case: 'few entries', entries: 3, offset: 1000, bytes: 200, zip64: false },
    { case: '65,534 entries', entries: 65_534, offset: 1000, bytes: 200, zip64: false },
    { case: '65,535 entries', entries: 65_535, offset: 1000, bytes: 200, zip64: true },
    { case: 'directory beyond 4 GiB', entries: 3, offset: 5 * GiB, bytes: 200, zip64: true },
    { case: 'directory over 4 GiB long', entries: 3, offset: 10, bytes: 4 * GiB, zip64: true },
  ])('$case', ({ entries, offset, bytes, zip64 }) => {
    const out = encodeEndRecords(entries, offset, bytes);
    const end = out.subarray(out.length - 22);
    expect(out.length).toBe(zip64 ? 98 : 22);
    expect(end.readUInt32LE(0)).toBe(0x06054b50);
    expect(end.readUInt16LE(10)).toBe(Math.min(entries, 0xffff));
    expect(end.readUInt32LE(12)).toBe(Math.min(bytes, 0xffffffff));
    expect(end.readUInt32LE(16)).toBe(Math.min(offset, 0xffffffff));
    // Before the classic record: the Zip64 end record and its locator, or nothing.
    const zip64Fields = (head: Buffer): bigint[] =>
      head.length === 0
        ? []
        : [head.readUInt32LE(0), head.readBigUInt64LE(32), head.readBigUInt64LE(40), head.readBigUInt64LE(48)]
            .concat([head.readUInt32LE(56), head.readBigUInt64LE(64)])
            .map(BigInt);
    expect(zip64Fields(out.subarray(0, out.length - 22))).toEqual(
      zip64 ? [0x06064b50, entries, bytes, offset, 0x07064b50, offset + bytes].map(BigInt) : [],
    );
  });
});

describe('DOS dates (APPNOTE 4.4.6)', () => {
  it.each([
    { when: '2000-01-01T00:00:00Z', date: (20 << 9) | (1 << 5) | 1, time: 0 },
    { when: '2024-02-29T13:37:43Z', date: (44 << 9) | (2 << 5) | 29, time: (13 << 11) | (37 << 5) | 21 },
    { when: '1970-01-01T00:00:00Z', date: (0 << 9) | (1 << 5) | 1, time: 0 },
    { when: '2200-06-01T00:00:00Z', date: (127 << 9) | (12 << 5) | 31, time: (23 << 11) | (59 << 5) | 29 },
  ])('$when', ({ when, date, time }) => {
    expect(dosDateTime(new Date(when))).toEqual({ date, time });
  });
});
