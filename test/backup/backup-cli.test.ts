import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { BACKUP_LOCK } from '../../src/backup/backup-account.js';
import { acquireLock } from '../../src/storage/lock.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;
let env: NodeJS.ProcessEnv;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
});

describe('rabbit-export backup', () => {
  it('--json prints one summary line for the log; the second night reuses the first', async () => {
    const first = await runCli(['backup', '--dir', dir, '--keep', '2', '--json'], { register: registerBackup, env });
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    const one = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(one).toMatchObject({ ok: true, exitCode: 0, since: null, complete: true, reused: 0, pruned: [], kept: 1 });

    service.store.touch(3);
    const second = await runCli(['backup', '--dir', dir, '--keep', '2', '--json'], { register: registerBackup, env });
    const two = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(second.code).toBe(0);
    expect(two.since).toBe((one.out as string).split('/').pop());
    expect(two).toMatchObject({ fetched: 1, reused: (one.prototypes as number) - 1 });
    expect(second.stderr).toBe('');
    for (const text of [first.stdout, second.stdout]) expect(text.includes(service.keys.readOnly)).toBe(false);
  });

  it('says in words what the first night fetched and what the second copied', async () => {
    const first = await runCli(['backup', '--dir', dir], { register: registerBackup, env });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^ {2}5 prototypes, all fetched: a full export$/m);
    expect(first.stdout).not.toContain('copied from -');
    service.store.touch(3);
    const second = await runCli(['backup', '--dir', dir], { register: registerBackup, env });
    expect(second.stdout).toMatch(/^ {2}5 prototypes: 4 unchanged, copied from \S+\.zip; 1 fetched$/m);
  });

  it('a run while another holds the folder exits 1 and says why, in the log line too', async () => {
    const held = await acquireLock(join(dir, BACKUP_LOCK), 'test');
    try {
      const run = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/another backup is running.*process \d+/);
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, exitCode: 1, error: { code: 'LOCKED' } });
    } finally {
      await held.release();
    }
    expect(await readdir(dir)).toEqual([]);
    expect(service.stats.requests).toBe(0);
  });

  it('exits 3 when the night is incomplete, 2 on a bad --keep', async () => {
    service.setFaults({ paths: [{ path: '/rabbit/api/prototypes/3.json', kind: '404' }] });
    const incomplete = await runCli(['backup', '--dir', dir, '--quiet'], { register: registerBackup, env });
    expect(incomplete.code).toBe(3);
    const usage = await runCli(['backup', '--dir', dir, '--keep', '0'], { register: registerBackup, env });
    expect(usage.code).toBe(2);
  });
});
