import { describe, expect, it } from 'vitest';
import { bucketOf, planRetention, type RetentionPolicy } from '../../src/backup/retention.js';
import { backupArchives, timeOf } from '../../src/backup/archive-names.js';

const at = (iso: string): number => Date.parse(iso);

/** Archives newest first, from `YYYY-MM-DD HH` stamps; a trailing `!` marks an incomplete one. */
function archives(...stamps: string[]) {
  return stamps.map((stamp) => {
    const complete = !stamp.endsWith('!');
    const iso = `${stamp.replace('!', '').replace(' ', 'T')}:00:00Z`;
    return { name: iso.slice(0, 13), time: at(iso), complete };
  });
}

const kept = (list: ReturnType<typeof archives>, policy: RetentionPolicy): string[] =>
  planRetention(list, policy)
    .filter((decision) => decision.keep)
    .map((decision) => decision.name);

describe('planRetention (restic forget semantics)', () => {
  // Two runs on some days, a gap, across a month and ISO week boundary.
  const nights = archives(
    '2026-12-02 03',
    '2026-12-01 15',
    '2026-12-01 03',
    '2026-11-30 03',
    '2026-11-29 03',
    '2026-11-28 03',
    '2026-11-23 03',
    '2026-11-22 03',
    '2026-10-31 03',
    '2026-10-01 03',
    '2025-12-31 03',
  );

  it.each<{ policy: RetentionPolicy; keep: string[] }>([
    { policy: { last: 3 }, keep: ['2026-12-02T03', '2026-12-01T15', '2026-12-01T03'] },
    // The newest of each of the last 3 days that have one: 12-01 15:00, not 03:00.
    { policy: { daily: 3 }, keep: ['2026-12-02T03', '2026-12-01T15', '2026-11-30T03'] },
    // ISO weeks: 12-02 and 11-30 are W49 (Monday 11-30), 11-29..11-23 W48, 11-22 W47.
    { policy: { weekly: 3 }, keep: ['2026-12-02T03', '2026-11-29T03', '2026-11-22T03'] },
    { policy: { monthly: 3 }, keep: ['2026-12-02T03', '2026-11-30T03', '2026-10-31T03'] },
    { policy: { yearly: 5 }, keep: ['2026-12-02T03', '2025-12-31T03'] },
    // Union of rules: each archive kept by any of them.
    {
      policy: { last: 1, daily: 2, monthly: 4 },
      keep: ['2026-12-02T03', '2026-12-01T15', '2026-11-30T03', '2026-10-31T03', '2025-12-31T03'],
    },
    // More buckets than archives keeps all the distinct buckets and removes nothing else.
    {
      policy: { daily: 100 },
      keep: [
        '2026-12-02T03',
        '2026-12-01T15',
        '2026-11-30T03',
        '2026-11-29T03',
        '2026-11-28T03',
        '2026-11-23T03',
        '2026-11-22T03',
        '2026-10-31T03',
        '2026-10-01T03',
        '2025-12-31T03',
      ],
    },
  ])('$policy keeps $keep', ({ policy, keep }) => {
    expect(kept(nights, policy)).toEqual(keep);
  });

  it.each<{ name: string; list: ReturnType<typeof archives>; policy: RetentionPolicy; keep: string[] }>([
    {
      name: 'a week of incomplete nights never pushes the last whole backup out, and fills no bucket',
      list: archives('2026-11-28 03!', '2026-11-27 03!', '2026-11-26 03!', '2026-11-25 03', '2026-11-24 03'),
      policy: { daily: 2 },
      keep: ['2026-11-28T03', '2026-11-25T03', '2026-11-24T03'],
    },
    {
      name: 'incomplete archives newer than the newest complete stay while among --keep-last',
      list: archives('2026-11-28 03!', '2026-11-27 03!', '2026-11-26 03!', '2026-11-25 03'),
      policy: { last: 2 },
      keep: ['2026-11-28T03', '2026-11-27T03', '2026-11-25T03'],
    },
    {
      name: 'an incomplete archive goes once a newer complete one exists',
      list: archives('2026-11-28 03', '2026-11-27 03!', '2026-11-26 03'),
      policy: { last: 3 },
      keep: ['2026-11-28T03', '2026-11-26T03'],
    },
    {
      name: 'the newest complete archive is kept when no rule would keep it',
      list: archives('2026-11-28 03!', '2026-11-27 03', '2026-11-26 03'),
      policy: { last: 1 },
      keep: ['2026-11-28T03', '2026-11-27T03'],
    },
    {
      name: 'nothing complete at all: only the newest incomplete within --keep-last',
      list: archives('2026-11-28 03!', '2026-11-27 03!', '2026-11-26 03!'),
      policy: { daily: 7 },
      keep: ['2026-11-28T03'],
    },
    { name: 'an empty folder', list: [], policy: { last: 1 }, keep: [] },
  ])('$name', ({ list, policy, keep }) => {
    expect(kept(list, policy)).toEqual(keep);
  });

  it('says why each archive is kept or removed', () => {
    const plan = planRetention(archives('2026-11-28 03!', '2026-11-27 03', '2026-11-26 03', '2026-11-25 03!'), {
      last: 1,
      daily: 2,
    });
    expect(plan).toEqual([
      { name: '2026-11-28T03', keep: true, reasons: ['newest, incomplete'] },
      { name: '2026-11-27T03', keep: true, reasons: ['newest complete', 'last 1', 'daily 2026-11-27'] },
      { name: '2026-11-26T03', keep: true, reasons: ['daily 2026-11-26'] },
      { name: '2026-11-25T03', keep: false, reasons: ['incomplete, a newer complete archive exists'] },
    ]);
  });

  it.each<RetentionPolicy>([{}, { last: 0 }, { daily: -1 }, { weekly: 1.5 }])('refuses the policy %o', (policy) => {
    expect(() => planRetention([], policy)).toThrow(RangeError);
  });
});

describe('retention buckets', () => {
  it.each([
    ['2026-01-01T00:00:00Z', 'weekly', '2026-W01'],
    ['2027-01-01T12:00:00Z', 'weekly', '2026-W53'],
    ['2024-12-30T00:00:00Z', 'weekly', '2025-W01'],
    ['2026-11-22T23:59:59Z', 'daily', '2026-11-22'],
    ['2026-11-22T23:59:59Z', 'monthly', '2026-11'],
  ] as const)('%s falls in %s bucket %s', (iso, bucket, key) => {
    expect(bucketOf(bucket, at(iso))).toBe(key);
  });

  it('reads the time of an archive from its name', () => {
    const [archive] = backupArchives(['2026-11-22T031500Z-2.zip']);
    expect(archive && timeOf(archive)).toBe(at('2026-11-22T03:15:00Z'));
  });
});
