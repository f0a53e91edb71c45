import { describe, expect, it } from 'vitest';
import { ZipNameTable } from '../../src/zip/zip-name-table.js';

describe('ZipNameTable', () => {
  it('finds every offset stored under a hash, through growth and colliding hashes', () => {
    const table = new ZipNameTable();
    const count = 5000;
    // Few distinct hashes: long probe chains, many candidates per hash.
    for (let i = 0; i < count; i += 1) table.add((i % 97) + 1, i * 10);
    for (let h = 1; h <= 97; h += 1) {
      const expected = Array.from({ length: count }, (_, i) => i)
        .filter((i) => (i % 97) + 1 === h)
        .map((i) => i * 10);
      expect(table.candidates(h).sort((a, b) => a - b)).toEqual(expected);
    }
    expect(table.candidates(98)).toEqual([]);
  });

  it('keeps offsets beyond 4 GiB exactly', () => {
    const table = new ZipNameTable();
    table.add(7, 123);
    table.add(7, 6 * 1024 ** 3 + 5);
    table.add(9, 2 ** 40 + 1);
    expect(table.candidates(7).sort((a, b) => a - b)).toEqual([123, 6 * 1024 ** 3 + 5]);
    expect(table.candidates(9)).toEqual([2 ** 40 + 1]);
  });

  it('never uses 0, the empty-slot marker, as a hash', () => {
    expect(ZipNameTable.hash(Buffer.alloc(0))).not.toBe(0);
  });
});
