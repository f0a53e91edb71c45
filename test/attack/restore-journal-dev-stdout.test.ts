import { lstat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { damagedArchiveFixture } from '../restore/restore-helpers.js';

/**
 * `--journal /dev/stdout` (a user who wants to watch the journal) is refused as a symbolic link,
 * rightly: nothing is followed through one. But the next step goes on "if you did not make it,
 * move it aside (mv /dev/stdout /dev/stdout.suspect) and tell whoever shares this machine": the
 * system's own link, which no one made, advised away; as root, the advice works, and every program
 * that writes to /dev/stdout fails until the next boot. A link the user only named is not theirs
 * to move: the way on is another --journal.
 */
const fixture = damagedArchiveFixture();

describe("a system's link named with --journal is refused, and never advised away", () => {
  it.each(['/dev/stdout', '/dev/stderr', '/dev/fd'])('--journal %s', async (journal) => {
    if (!(await lstat(journal).catch(() => undefined))?.isSymbolicLink()) return;
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await fixture.restore(['--journal', journal, ...dryRun], { json: true, cwd: fixture.dir });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/^next: .*--journal/m);
      expect(run.stderr).not.toMatch(/\bmv\b|\brm\b/);
    }
    expect(fixture.service.stats.requests).toBe(0);
    expect((await lstat(journal)).isSymbolicLink()).toBe(true);
  });
});
