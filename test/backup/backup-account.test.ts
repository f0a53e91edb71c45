import { spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { backupAccount, BACKUP_LOCK, type BackupOptions } from '../../src/backup/backup-account.js';
import { acquireLock } from '../../src/storage/lock.js';
import { isRabbitError } from '../../src/core/errors.js';
import { manifestOf, readArchive } from '../helpers/archive.js';
import { flipEntryByte } from '../helpers/zip-layout.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const DAY = 86_400_000;
const NIGHT_1 = Date.UTC(2026, 10, 20, 3, 15, 0);

const backup = (night: number, extra: Partial<BackupOptions> = {}) =>
  backupAccount({
    dir,
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
    now: () => night,
    ...extra,
  });

const zips = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.zip')).sort();

describe('backupAccount', () => {
  it('--keep 2 over three nights leaves the newest two, each night building on the one before', async () => {
    const first = await backup(NIGHT_1, { keep: 2 });
    expect(first.since).toBeNull();
    expect(first.out).toBe(join(dir, '2026-11-20T031500Z.zip'));

    service.store.touch(1001);
    const second = await backup(NIGHT_1 + DAY, { keep: 2 });
    expect(second.since).toBe('2026-11-20T031500Z.zip');
    expect(second.pruned).toEqual([]);

    service.store.touch(1002);
    service.stats.reset();
    const third = await backup(NIGHT_1 + 2 * DAY, { keep: 2 });
    expect(third.since).toBe('2026-11-21T031500Z.zip');
    expect(third.pruned).toEqual(['2026-11-20T031500Z.zip']);
    expect(await zips()).toEqual(['2026-11-21T031500Z.zip', '2026-11-22T031500Z.zip']);
    // Nothing is left behind but the archives and their checksums: no lock, no work directory, no temp file.
    expect((await readdir(dir)).sort()).toEqual([
      '2026-11-21T031500Z.zip',
      '2026-11-21T031500Z.zip.sha256',
      '2026-11-22T031500Z.zip',
      '2026-11-22T031500Z.zip.sha256',
      'SHA256SUMS',
    ]);

    const { manifest } = await readArchive(third.out);
    expect(manifest.complete).toBe(true);
    expect(manifest.prototypes['1002']?.origin).toEqual({ mode: 'fetched' });
    expect(manifest.prototypes['1001']?.origin).toEqual({ mode: 'reused', archive: '2026-11-21T031500Z.zip' });
    expect(service.stats.byPath.get('/rabbit/api/prototypes/1001/pages.json')).toBeUndefined();
  });

  it('refuses to overlap a running backup, says why, and touches nothing', async () => {
    await backup(NIGHT_1);
    const held = await acquireLock(join(dir, BACKUP_LOCK), 'test');
    service.stats.reset();
    try {
      const error = await backup(NIGHT_1 + DAY, { keep: 1 }).catch((e: unknown) => e);
      expect(isRabbitError(error, 'LOCKED')).toBe(true);
      expect((error as Error).message).toMatch(/another backup is running/);
      expect((error as Error).message).toContain(String(process.pid));
    } finally {
      await held.release();
    }
    expect(service.stats.requests).toBe(0);
    expect(await zips()).toEqual(['2026-11-20T031500Z.zip']);
  });

  it('takes over a stale lock left by a dead process', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(
      join(dir, BACKUP_LOCK),
      JSON.stringify({ pid: dead, host: hostname(), since: '2026-11-19T03:15:00Z' }),
    );
    const result = await backup(NIGHT_1);
    expect(result.export.complete).toBe(true);
    expect(await zips()).toEqual(['2026-11-20T031500Z.zip']);
  });

  it('never rotates away the newest complete archive, nor files that are not its own', async () => {
    await writeFile(join(dir, 'notes.txt'), 'mine');
    await writeFile(join(dir, 'team.zip'), 'mine too');
    await writeFile(join(dir, '2026-11-01.zip'), 'not a stamp of ours');
    await backup(NIGHT_1, { keep: 1 });
    service.setFaults({ paths: [{ path: '/rabbit/api/prototypes/1001.json', kind: '404' }] });
    const incomplete = await backup(NIGHT_1 + DAY, { keep: 1 });
    expect(incomplete.export.complete).toBe(false);
    const again = await backup(NIGHT_1 + 2 * DAY, { keep: 1 });
    expect(again.export.complete).toBe(false);
    expect(again.pruned).toEqual(['2026-11-21T031500Z.zip']);
    expect(await zips()).toEqual(['2026-11-01.zip', '2026-11-20T031500Z.zip', '2026-11-22T031500Z.zip', 'team.zip']);
    expect((await readdir(dir)).includes('notes.txt')).toBe(true);
  });

  it('names a second run in the same second apart, and skips an unreadable newest archive as --since', async () => {
    const first = await backup(NIGHT_1);
    const second = await backup(NIGHT_1);
    expect(second.out).toBe(join(dir, '2026-11-20T031500Z-2.zip'));
    expect(second.since).toBe('2026-11-20T031500Z.zip');
    await writeFile(join(dir, '2026-11-20T031500Z-3.zip'), 'cut short');
    const third = await backup(NIGHT_1 + 1000);
    expect(third.unreadable).toEqual(['2026-11-20T031500Z-3.zip']);
    expect(third.since).toBe('2026-11-20T031500Z-2.zip');
    expect(first.since).toBeNull();
  });

  it('uses what a damaged previous archive verifiably holds', async () => {
    const first = await backup(NIGHT_1);
    const png = (await manifestOf(first.out)).prototypes['3']?.revisions[
      String((await manifestOf(first.out)).prototypes['3']?.revision)
    ]?.files.find((file) => file.path.endsWith('.png'));
    if (!png) throw new Error('prototype 3 has no PNG');
    await flipEntryByte(first.out, png.path);
    service.stats.reset();
    const next = await backup(NIGHT_1 + DAY);
    expect(next.export.complete).toBe(true);
    expect(service.stats.byPath.get(png.source)).toBe(1);
    expect((await manifestOf(next.out)).prototypes['1001']?.origin?.mode).toBe('reused');
  });

  it('clears what an interrupted night left behind, taking over its work directory', async () => {
    const leftover = join(dir, '.2026-11-19T031500Z.zip.rabbit-work');
    await mkdir(join(leftover, 'spool'), { recursive: true });
    await writeFile(join(leftover, 'spool', 'x'), 'partial');
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(join(dir, `.2026-11-19T031500Z.zip.${deadPid}.abcdef.tmp`), 'half a zip');
    const result = await backup(NIGHT_1);
    expect(result.resumed).toBe('2026-11-19T031500Z.zip');
    expect(result.export.complete).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([
      '2026-11-20T031500Z.zip',
      '2026-11-20T031500Z.zip.sha256',
      'SHA256SUMS',
    ]);
  });

  it('refuses a --dir that does not exist and a --keep below 1', async () => {
    const missing = await backupAccount({
      dir: join(dir, 'nope'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
    }).catch((e: unknown) => e);
    expect(isRabbitError(missing, 'USAGE')).toBe(true);
    const zero = await backup(NIGHT_1, { keep: 0 }).catch((e: unknown) => e);
    expect(isRabbitError(zero, 'USAGE')).toBe(true);
    expect(service.stats.requests).toBe(0);
  });
});
