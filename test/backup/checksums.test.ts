import { spawnSync } from 'node:child_process';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { backupAccount } from '../../src/backup/backup-account.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { sumLine } from '../../src/archive/checksum-file.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const DAY = 86_400_000;
const NIGHT_1 = Date.UTC(2026, 10, 20, 3, 15, 0);
const backup = (night: number, keep: number) =>
  backupAccount({ dir, baseUrl: service.baseUrl, keys: [service.keys.readOnly], keep, now: () => night });

/** GNU coreutils' sha256sum -c in `cwd`: the check a user makes without this tool. */
function sha256sumCheck(cwd: string, file: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('sha256sum', ['-c', '--strict', file], { cwd, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

describe('checksums outside the zip', () => {
  it('each archive has a sidecar and SHA256SUMS lists the folder, right through a rotation', async () => {
    await backup(NIGHT_1, 2);
    await backup(NIGHT_1 + DAY, 2);
    const third = await backup(NIGHT_1 + 2 * DAY, 2);
    expect(third.pruned).toEqual(['2026-11-20T031500Z.zip']);
    const names = await readdir(dir);
    expect(names.sort()).toEqual([
      '2026-11-21T031500Z.zip',
      '2026-11-21T031500Z.zip.sha256',
      '2026-11-22T031500Z.zip',
      '2026-11-22T031500Z.zip.sha256',
      'SHA256SUMS',
    ]);
    for (const sidecar of names.filter((name) => name.endsWith('.sha256'))) {
      const check = sha256sumCheck(dir, sidecar);
      expect(check.status).toBe(0);
      expect(check.stdout).toBe(`${sidecar.replace(/\.sha256$/, '')}: OK\n`);
    }
    const sums = sha256sumCheck(dir, 'SHA256SUMS');
    expect(sums.status).toBe(0);
    expect(sums.stdout).toBe('2026-11-21T031500Z.zip: OK\n2026-11-22T031500Z.zip: OK\n');
    expect(await readFile(join(dir, '2026-11-22T031500Z.zip.sha256'), 'utf8')).toBe(
      `${third.sha256}  2026-11-22T031500Z.zip\n`,
    );

    // An archive deleted by hand leaves SHA256SUMS passing after the next night.
    spawnSync('rm', [join(dir, '2026-11-21T031500Z.zip')]);
    await backup(NIGHT_1 + 3 * DAY, 5);
    expect(sha256sumCheck(dir, 'SHA256SUMS').stdout).toBe('2026-11-22T031500Z.zip: OK\n2026-11-23T031500Z.zip: OK\n');
    expect((await readdir(dir)).includes('2026-11-21T031500Z.zip.sha256')).toBe(false);
  });

  it('verify checks the sidecar: a tampered zip or sidecar fails, a missing sidecar is fine', async () => {
    const run = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env() });
    const { out, sha256 } = JSON.parse(run.stdout) as { out: string; sha256: string };
    const good = await runCli(['verify', out], { register: registerVerify });
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(`matches ${out}.sha256`);

    // The sidecar says something else: the zip itself is intact, but the pair does not match.
    await writeFile(`${out}.sha256`, sumLine('0'.repeat(64), 'x.zip'));
    const wrongSidecar = await runCli(['verify', out, '--json'], { register: registerVerify });
    expect(wrongSidecar.code).toBe(1);
    expect(JSON.parse(wrongSidecar.stdout)).toMatchObject({
      ok: false,
      sidecar: { status: 'mismatch', expected: '0'.repeat(64), actual: sha256 },
    });
    const human = await runCli(['verify', out], { register: registerVerify });
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/FAILED: the file does not match .*\.sha256/);
    // The verdict is the one line that says FAILED: nothing reads "OK" for a pair that does not match.
    expect(human.stdout).not.toMatch(/^OK/m);
    // The verdict comes last, but for the next step after it.
    const [verdict, next] = human.stdout.trim().split('\n').slice(-2);
    expect(verdict).toMatch(/^FAILED: .*every entry inside checks/);
    expect(next).toMatch(/^next: if \S+\.zip is a copy, copy it again/);

    // Bytes added to the zip: sha256sum -c and verify both fail.
    await writeFile(`${out}.sha256`, sumLine(sha256, out.split('/').pop() as string));
    await appendFile(out, 'x');
    expect(sha256sumCheck(dir, 'SHA256SUMS').status).not.toBe(0);
    const tampered = await runCli(['verify', out, '--json'], { register: registerVerify });
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toMatchObject({ ok: false, sidecar: { status: 'mismatch' } });

    // No sidecar: verify judges the zip alone.
    const exported = join(dir, 'team.zip');
    expect(
      (await runCli(['export', '--out', exported, '--quiet'], { register: registerExport, env: env() })).code,
    ).toBe(0);
    spawnSync('rm', [`${exported}.sha256`]);
    const alone = await runCli(['verify', exported, '--json'], { register: registerVerify });
    expect(alone.code).toBe(0);
    expect(JSON.parse(alone.stdout)).toMatchObject({ ok: true, sidecar: { status: 'missing' } });
  });

  it('export writes FILE.zip.sha256 beside --out, which sha256sum -c accepts', async () => {
    const out = join(dir, 'team.zip');
    const run = await runCli(['export', '--out', out, '--json'], { register: registerExport, env: env() });
    expect(run.code).toBe(0);
    const { sha256 } = JSON.parse(run.stdout) as { sha256: string };
    expect(await readFile(`${out}.sha256`, 'utf8')).toBe(`${sha256}  team.zip\n`);
    expect(sha256sumCheck(dir, 'team.zip.sha256').stdout).toBe('team.zip: OK\n');
  });

  it.each(['plain.zip', 'back\\slash.zip', 'new\nline.zip'])(
    'names %j so that sha256sum -c reads it back',
    async (name) => {
      await writeFile(join(dir, name), 'bytes');
      const { createHash } = await import('node:crypto');
      await writeFile(join(dir, 'SUMS'), sumLine(createHash('sha256').update('bytes').digest('hex'), name));
      const check = sha256sumCheck(dir, 'SUMS');
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    },
  );
});
