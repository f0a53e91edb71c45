import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { damagedArchiveFixture } from '../restore/restore-helpers.js';

/**
 * `--journal` names a file. A path that ends in a slash (or in `.` or `..`) names a folder; when
 * no such folder exists, the checks before the lock found nothing there (the parent they look at
 * is the cwd), the dry run planned as if all were well, and the real run stopped with INTERNAL on
 * the lock's temporary file, `ENOENT ... open 'newdir/..rabbit-lock.PID.HEX.tmp'`. And an empty
 * --journal (`--journal "$JOURNAL"` with the variable unset) was taken as no --journal at all: the
 * default journal beside the archive, which is removed after a run that finished, where the user
 * asked for one to keep.
 */
const fixture = damagedArchiveFixture();

describe('--journal that cannot name a file is a usage error, before anything is sent', () => {
  // '-' reads as stdout, as --out - is, but a journal is read back to resume: a file named '-' it would be.
  it.each(['newdir/', 'newdir/.', 'newdir/..', '', '-'])('--journal %j', async (journal) => {
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await fixture.restore(['--journal', journal, ...dryRun], { json: true, cwd: fixture.dir });
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { error?: { code: string } };
      expect({ dryRun, code: run.code, error: summary.error?.code }).toEqual({ dryRun, code: 2, error: 'USAGE' });
    }
    expect(fixture.service.stats.requests).toBe(0);
    expect(await readdir(fixture.dir)).toEqual(['a.zip']);
  });
});
