import { execFileSync } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { backupAccount, type BackupOptions } from '../../src/backup/backup-account.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { sha256OfFile } from '../../src/archive/checksum-file.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

const NOBODY = 65534;
let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

const DAY = 86_400_000;
const NIGHT_1 = Date.UTC(2026, 10, 20, 3, 15, 0);
const NAME = (night: number): string => `${new Date(night).toISOString().slice(0, 19).replace(/:/g, '')}Z.zip`;

const backup = (folder: string, night: number, extra: Partial<BackupOptions> = {}) =>
  backupAccount({
    dir: folder,
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
    now: () => night,
    ...extra,
  });

describe('backup into a folder on a shared machine', () => {
  it.each([
    ['writable by others (even sticky)', 0, 0o1777, 'chmod 700'],
    ['owned by another user', NOBODY, 0o755, '.suspect'],
  ])('refuses a --dir %s', async (_, owner, mode, next) => {
    const folder = join(dir, 'nightly');
    await mkdir(folder);
    await chmod(folder, mode);
    await chown(folder, owner, owner);
    const run = await runCli(['backup', '--dir', folder, '--json'], {
      register: registerBackup,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as { error: { code: string; next: string } };
    expect(line.error.code).toBe('UNSAFE_PATH');
    expect(line.error.next).toContain(next);
    expect(await readdir(folder)).toEqual([]);
  });

  it('neither builds on nor keeps count of archives another user left or stamped in the future', async () => {
    const folder = join(dir, 'nightly');
    await mkdir(folder, { mode: 0o700 });
    await backup(folder, NIGHT_1, { keep: 2 });
    await backup(folder, NIGHT_1 + DAY, { keep: 2 });
    // Forged from a real archive: one handed over to nobody, one of root's own stamped in 2099.
    const theirs = '2099-01-02T000000Z.zip';
    const future = '2099-01-01T000000Z.zip';
    await copyFile(join(folder, NAME(NIGHT_1)), join(folder, theirs));
    await chown(join(folder, theirs), NOBODY, NOBODY);
    await copyFile(join(folder, NAME(NIGHT_1)), join(folder, future));
    const third = await backup(folder, NIGHT_1 + 2 * DAY, { keep: 2 });
    expect(third.since).toBe(NAME(NIGHT_1 + DAY));
    expect(third.ignored.map((archive) => archive.name).sort()).toEqual([future, theirs]);
    expect(third.pruned).toEqual([NAME(NIGHT_1)]);
    const left = (await readdir(folder)).filter((name) => name.endsWith('.zip')).sort();
    expect(left).toEqual([NAME(NIGHT_1 + DAY), NAME(NIGHT_1 + 2 * DAY), future, theirs]);
    expect(await readFile(join(folder, 'SHA256SUMS'), 'utf8')).not.toContain('2099');
  });

  it('passes over a FIFO planted as an archive or as a sidecar, and never waits on it', async () => {
    const folder = join(dir, 'nightly');
    await mkdir(folder, { mode: 0o700 });
    await backup(folder, NIGHT_1, { keep: 3 });
    const fifo = '2026-11-20T120000Z.zip';
    execFileSync('mkfifo', [join(folder, fifo)]);
    await rm(join(folder, `${NAME(NIGHT_1)}.sha256`));
    execFileSync('mkfifo', [join(folder, `${NAME(NIGHT_1)}.sha256`)]);
    const second = await backup(folder, NIGHT_1 + DAY, { keep: 3 });
    expect(second.since).toBe(NAME(NIGHT_1));
    expect(second.ignored).toEqual([{ name: fifo, why: 'is not a regular file' }]);
    const sums = await readFile(join(folder, 'SHA256SUMS'), 'utf8');
    expect(sums).toContain(NAME(NIGHT_1 + DAY));
    expect(sums).not.toContain(NAME(NIGHT_1));
  }, 20_000);

  it('refuses to hash a FIFO rather than wait on it', async () => {
    const fifo = join(dir, 'pipe.zip');
    execFileSync('mkfifo', [fifo]);
    await expect(sha256OfFile(fifo)).rejects.toMatchObject({ code: 'EISDIR' });
  }, 10_000);
});
