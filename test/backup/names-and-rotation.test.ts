import { describe, expect, it } from 'vitest';
import { backupArchives, nextBackupName, parseBackupName, stampOf } from '../../src/backup/archive-names.js';

describe('backup archive names', () => {
  it.each([
    ['2026-11-22T031500Z.zip', { stamp: '2026-11-22T031500Z', seq: 1 }],
    ['2026-11-22T031500Z-2.zip', { stamp: '2026-11-22T031500Z', seq: 2 }],
    ['2026-11-22T031500Z-12.zip', { stamp: '2026-11-22T031500Z', seq: 12 }],
    ['2026-11-22T031500Z-1.zip', undefined],
    ['2026-11-22T03:15:00Z.zip', undefined],
    ['2026-11-22.zip', undefined],
    ['team.zip', undefined],
    ['2026-11-22T031500Z.zip.tmp', undefined],
    ['.2026-11-22T031500Z.zip.rabbit-work', undefined],
  ])('%s parses as %o', (name, expected) => {
    const parsed = parseBackupName(name);
    expect(parsed === undefined ? undefined : { stamp: parsed.stamp, seq: parsed.seq }).toEqual(expected);
  });

  it('stamps in UTC without colons or milliseconds', () => {
    expect(stampOf(Date.UTC(2026, 10, 22, 3, 15, 0, 999))).toBe('2026-11-22T031500Z');
  });

  it('sorts newest first, -10 after -9 within a second, and ignores foreign names', () => {
    const names = [
      '2026-11-22T031500Z-10.zip',
      'x.zip',
      '2026-11-21T235959Z.zip',
      '2026-11-22T031500Z-9.zip',
      '2026-11-22T031500Z.zip',
    ];
    expect(backupArchives(names).map((a) => a.name)).toEqual([
      '2026-11-22T031500Z-10.zip',
      '2026-11-22T031500Z-9.zip',
      '2026-11-22T031500Z.zip',
      '2026-11-21T235959Z.zip',
    ]);
  });

  it('picks the first free name in a second', () => {
    const at = Date.UTC(2026, 10, 22, 3, 15, 0);
    expect(nextBackupName(at, new Set())).toBe('2026-11-22T031500Z.zip');
    expect(nextBackupName(at, new Set(['2026-11-22T031500Z.zip', '2026-11-22T031500Z-2.zip']))).toBe(
      '2026-11-22T031500Z-3.zip',
    );
  });
});
