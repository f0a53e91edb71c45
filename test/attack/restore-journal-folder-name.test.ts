import { readdir } from 'node:fs/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, damage, exportPrototype } from '../restore/restore-helpers.js';

/**
 * `--journal` names a file. A path that ends in a slash (or in `.` or `..`) names a folder; when
 * no such folder exists, the checks before the lock found nothing there (the parent they look at
 * is the cwd), the dry run planned as if all were well, and the real run stopped with INTERNAL on
 * the lock's temporary file, `ENOENT ... open 'newdir/..rabbit-lock.PID.HEX.tmp'`. And an empty
 * --journal (`--journal "$JOURNAL"` with the variable unset) was taken as no --journal at all: the
 * default journal beside the archive, which is removed after a run that finished, where the user
 * asked for one to keep.
 */
let service: FakeService;
let dir: string;
let archive: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  archive = await exportPrototype(service, dir, 'a.zip');
  damage(service);
  service.stats.reset();
});

const restore = (...args: string[]) =>
  runCli(['restore', archive, '--prototype', PROTO, '--json', ...args], {
    register: registerRestore,
    env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    cwd: dir,
  });

describe('--journal that cannot name a file is a usage error, before anything is sent', () => {
  // '-' reads as stdout, as --out - is, but a journal is read back to resume: a file named '-' it would be.
  it.each(['newdir/', 'newdir/.', 'newdir/..', '', '-'])('--journal %j', async (journal) => {
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await restore('--journal', journal, ...dryRun);
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { error?: { code: string } };
      expect({ dryRun, code: run.code, error: summary.error?.code }).toEqual({ dryRun, code: 2, error: 'USAGE' });
    }
    expect(service.stats.requests).toBe(0);
    expect(await readdir(dir)).toEqual(['a.zip']);
  });
});
