import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { backupAccount } from '../../src/backup/backup-account.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// One service for the file, read and never changed by these tests: the nights one test has backed
// up are copied into the next test's folder instead of exported again, and a night's --since, as
// tonight's, must name this same service.
let service: FakeService;
let dir: string;
let kept: string;
beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  kept = await mkdtemp(join(tmpdir(), 'retention-nights-'));
});
afterAll(async () => {
  await service.close();
  await rm(kept, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await tempDir();
  service.stats.reset();
});

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });
const zips = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.zip')).sort();

/** The folder after each sequence of nights backed up so far, by the sequence. */
const folders = new Map<string, string>();

/**
 * Backups at these UTC times, kept all (as a large --keep-last would), each on the one before. The
 * folder after the longest sequence of the same first nights already backed up is copied in, and
 * only the nights after it are exported.
 */
async function nights(...isos: string[]): Promise<void> {
  let done = isos.length;
  while (done > 0 && !folders.has(isos.slice(0, done).join())) done -= 1;
  if (done > 0) await cp(folders.get(isos.slice(0, done).join()) as string, dir, { recursive: true });
  for (const [at, iso] of isos.entries()) {
    if (at < done) continue;
    await backupAccount({
      dir,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      keep: 100,
      now: () => Date.parse(iso),
    });
    const copy = join(kept, String(folders.size));
    await cp(dir, copy, { recursive: true });
    folders.set(isos.slice(0, at + 1).join(), copy);
  }
}

describe('backup --keep-* and --dry-run', () => {
  it('--dry-run prints the plan with its reasons and does nothing: no export, no request, nothing removed', async () => {
    await nights('2026-11-20T03:15:00Z', '2026-11-21T03:15:00Z', '2026-11-21T15:00:00Z', '2026-11-22T03:15:00Z');
    const before = await readdir(dir);
    service.stats.reset();
    const run = await runCli(['backup', '--dir', dir, '--keep-daily', '2', '--dry-run'], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(0);
    expect(service.stats.requests).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(before.sort());
    expect(run.stdout).toMatch(/^dry run: nothing is backed up or removed/);
    // Tonight's archive (a later day than any of these) takes one of the two days.
    expect(run.stdout).toMatch(
      /^ {2}keep {3}\d{4}-\d\d-\d\dT\d{6}Z\.zip {2}tonight's archive, newest complete, daily /m,
    );
    expect(run.stdout).toContain('keep   2026-11-22T031500Z.zip  daily 2026-11-22\n');
    expect(run.stdout).toContain('remove 2026-11-21T150000Z.zip  matches no --keep rule\n');
    expect(run.stdout).toContain('remove 2026-11-21T031500Z.zip  matches no --keep rule\n');
    expect(run.stdout).toContain('remove 2026-11-20T031500Z.zip  matches no --keep rule\n');

    const json = await runCli(
      ['backup', '--dir', dir, '--keep-last', '1', '--keep-monthly', '3', '--dry-run', '--json'],
      {
        register: registerBackup,
        env: env(),
      },
    );
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as { archives: Array<{ name: string; keep: boolean; tonight?: true }> };
    expect(plan).toMatchObject({ type: 'summary', command: 'backup', ok: true, dryRun: true, kept: 1, removed: 4 });
    expect(plan.archives.slice(1)).toEqual([
      { name: '2026-11-22T031500Z.zip', keep: false, reasons: ['matches no --keep rule'] },
      { name: '2026-11-21T150000Z.zip', keep: false, reasons: ['matches no --keep rule'] },
      { name: '2026-11-21T031500Z.zip', keep: false, reasons: ['matches no --keep rule'] },
      { name: '2026-11-20T031500Z.zip', keep: false, reasons: ['matches no --keep rule'] },
    ]);
    expect(plan.archives[0]).toMatchObject({ keep: true, tonight: true });
    expect(service.stats.requests).toBe(0);
  });

  it('a real run applies the rules, tonight included, and says what it removed', async () => {
    await nights('2026-11-20T03:15:00Z', '2026-11-21T03:15:00Z', '2026-11-21T15:00:00Z');
    const run = await runCli(['backup', '--dir', dir, '--keep-daily', '2', '--json'], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as { out: string; pruned: string[]; kept: number };
    const tonight = summary.out.split('/').pop() as string;
    // Tonight (a later day than any of these) and the newest of 11-21.
    expect(await zips()).toEqual(['2026-11-21T150000Z.zip', tonight].sort());
    expect(summary.pruned.sort()).toEqual(['2026-11-20T031500Z.zip', '2026-11-21T031500Z.zip']);
    expect(summary.kept).toBe(2);
  });

  it('--dry-run predicts what the real run then does: the same archives removed, the same kept', async () => {
    await nights('2026-11-20T03:15:00Z', '2026-11-21T03:15:00Z', '2026-11-21T15:00:00Z', '2026-11-22T03:15:00Z');
    const rules = ['--keep-last', '1', '--keep-daily', '2'];
    const dry = await runCli(['backup', '--dir', dir, ...rules, '--dry-run', '--json'], {
      register: registerBackup,
      env: env(),
    });
    const plan = JSON.parse(dry.stdout) as { kept: number; archives: Array<{ name: string; keep: boolean }> };
    const real = await runCli(['backup', '--dir', dir, ...rules, '--json'], { register: registerBackup, env: env() });
    expect(real.code).toBe(0);
    const night = JSON.parse(real.stdout) as { pruned: string[]; kept: number };
    expect(night.pruned.sort()).toEqual(
      plan.archives
        .filter((a) => !a.keep)
        .map((a) => a.name)
        .sort(),
    );
    expect(night.pruned.length).toBe(3);
    expect(night.kept).toBe(plan.kept);
  });

  it('--dry-run names every file the real run removes: a sidecar whose archive was deleted by hand too', async () => {
    await nights('2026-11-20T03:15:00Z', '2026-11-21T03:15:00Z', '2026-11-22T03:15:00Z');
    // Deleted by hand; its .sha256 stays, and the next rotation takes it away.
    await rm(join(dir, '2026-11-21T031500Z.zip'));
    const rules = ['--keep-last', '2'];
    const text = await runCli(['backup', '--dir', dir, ...rules, '--dry-run'], {
      register: registerBackup,
      env: env(),
    });
    expect(text.stdout).toContain('remove 2026-11-21T031500Z.zip.sha256  its archive is no longer in the folder\n');
    expect(text.stdout).toContain('2 kept, 1 removed, and 1 sidecar of an archive no longer there\n');
    const dry = await runCli(['backup', '--dir', dir, ...rules, '--dry-run', '--json'], {
      register: registerBackup,
      env: env(),
    });
    const plan = JSON.parse(dry.stdout) as {
      archives: Array<{ name: string; keep: boolean }>;
      orphanSidecars?: string[];
    };
    const before = await readdir(dir);
    const real = await runCli(['backup', '--dir', dir, ...rules, '--json'], { register: registerBackup, env: env() });
    expect(real.code).toBe(0);
    const after = new Set(await readdir(dir));
    const removed = before.filter((name) => !after.has(name)).sort();
    const predicted = [
      ...plan.archives.filter((a) => !a.keep).flatMap((a) => [a.name, `${a.name}.sha256`]),
      ...(plan.orphanSidecars ?? []),
    ].sort();
    expect(removed).toEqual(predicted);
    expect(removed).toContain('2026-11-21T031500Z.zip.sha256');
    const night = JSON.parse(real.stdout) as { orphanSidecars?: string[] };
    expect(night.orphanSidecars).toEqual(['2026-11-21T031500Z.zip.sha256']);
  });

  it.each([
    [['--keep', '3', '--keep-last', '4']],
    [['--keep-daily', '0']],
    [['--keep-weekly', 'x']],
    [['--keep', '0']],
  ])('refuses %j as a usage error before any request', async (flags) => {
    const run = await runCli(['backup', '--dir', dir, ...flags], { register: registerBackup, env: env() });
    expect(run.code).toBe(2);
    expect(service.stats.requests).toBe(0);
  });
});
