import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { BACKUP_LOCK } from '../../src/backup/backup-account.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

// issue 14: an unattended backup says who holds a stuck lock, and an edited crontab URL does not
// stop the backups.

let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const env = (baseUrl: string): NodeJS.ProcessEnv => ({
  RABBIT_API_KEY: service.keys.readOnly,
  RABBIT_BASE_URL: baseUrl,
});

describe('backup facing a live lock', () => {
  it("reports the holder's pid, host and age in its message and its --json line, and leaves the lock alone", async () => {
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000 - 5 * 3_600_000).toISOString();
    // This test's own process: alive, on this host, "running" for three days.
    const lock = JSON.stringify({ pid: process.pid, host: hostname(), since: threeDaysAgo });
    await writeFile(join(dir, BACKUP_LOCK), lock);

    const run = await runCli(['backup', '--dir', dir, '--json'], {
      register: registerBackup,
      env: env(service.baseUrl),
    });
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as {
      error: { code: string; holder: { pid: number; host: string; since: string; ageSeconds: number } };
    };
    expect(line.error.code).toBe('LOCKED');
    expect(line.error.holder).toMatchObject({ pid: process.pid, host: hostname(), since: threeDaysAgo });
    expect(line.error.holder.ageSeconds).toBeGreaterThanOrEqual(3 * 86_400 + 5 * 3_600);
    expect(line.error.holder.ageSeconds).toBeLessThan(3 * 86_400 + 6 * 3_600);
    expect(run.stderr).toContain(`process ${process.pid} on ${hostname()}`);
    expect(run.stderr).toMatch(/running for 3d5h/);

    // It never takes over or kills a live holder.
    expect(await readFile(join(dir, BACKUP_LOCK), 'utf8')).toBe(lock);
    expect(await readdir(dir)).toEqual([BACKUP_LOCK]);
    expect(service.stats.requests).toBe(0);
  });
});

describe('backup after the base URL changed', () => {
  it('makes a full export, exits 0 and says why; the same service spelled differently is reused', async () => {
    const numeric = service.baseUrl;
    const named = numeric.replace('127.0.0.1', 'localhost');
    const first = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env(numeric) });
    expect(first.code).toBe(0);
    const firstOut = (JSON.parse(first.stdout) as { out: string }).out.split('/').pop() as string;

    // 127.0.0.1 and localhost are different services as far as the URL can tell: nothing reused.
    const second = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env(named) });
    expect(second.code).toBe(0);
    const two = JSON.parse(second.stdout) as {
      since: string | null;
      sinceSkipped: string | null;
      reused: number;
      complete: boolean;
      out: string;
    };
    expect(two).toMatchObject({ since: null, reused: 0, complete: true });
    expect(two.sinceSkipped).toContain(firstOut);
    expect(two.sinceSkipped).toContain(numeric);

    // Upper case, the default port's absence and a trailing slash do not make another service.
    const respelled = `${named.replace('http://localhost', 'HTTP://LOCALHOST')}/`;
    const fourth = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env(respelled) });
    expect(fourth.code).toBe(0);
    const four = JSON.parse(fourth.stdout) as { since: string | null; sinceSkipped: string | null };
    expect(four.since).toBe(two.out.split('/').pop());
    expect(four.sinceSkipped).toBeNull();
  });

  it('says in human output why nothing was reused', async () => {
    expect(
      (await runCli(['backup', '--dir', dir, '--quiet'], { register: registerBackup, env: env(service.baseUrl) })).code,
    ).toBe(0);
    const run = await runCli(['backup', '--dir', dir], {
      register: registerBackup,
      env: env(service.baseUrl.replace('127.0.0.1', 'localhost')),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /full export: .* was exported from http:\/\/127\.0\.0\.1:\d+, not http:\/\/localhost:\d+/,
    );
  });
});
