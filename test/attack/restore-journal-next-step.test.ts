import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { damagedArchiveFixture } from '../restore/restore-helpers.js';

/**
 * A careless --journal: a folder (the user's own, with their files in it), or an existing text
 * file of theirs that the group may write (umask 002, the default of many distributions). Both are
 * refused, rightly, but as UNSAFE_PATH, whose next step is `rm -r` of what the user named: `rm -r
 * ~/Documents` for `--journal ~/Documents`. A journal in a folder that does not exist fails on
 * the lock's temporary file, with a raw ENOENT naming that file and no next step.
 */
const fixture = damagedArchiveFixture({ name: 'night.zip' });

describe("a --journal that is not a journal file gets a next step that keeps the user's files", () => {
  it("a folder of the user's is a usage error, and nothing says to remove it", async () => {
    const folder = join(fixture.dir, 'Documents');
    await mkdir(folder);
    await writeFile(join(folder, 'thesis.txt'), 'years of work');
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await fixture.restore(['--journal', folder, ...dryRun]);
      expect(run.code).toBe(2);
      expect(run.stderr).not.toMatch(/\brm\b/);
    }
    expect(await readdir(folder)).toEqual(['thesis.txt']);
  });

  it("a text file of the user's that the group may write is told as not a journal, not to be removed", async () => {
    const notes = join(fixture.dir, 'notes.txt');
    await writeFile(notes, 'my notes\n');
    await chmod(notes, 0o664);
    const run = await fixture.restore(['--journal', notes]);
    expect(run.stderr).not.toMatch(/\brm\b/);
    expect(await readFile(notes, 'utf8')).toBe('my notes\n');
  });

  it("a journal in a folder that does not exist is told with a next step, not a temporary file's ENOENT", async () => {
    const run = await fixture.restore(['--journal', join(fixture.dir, 'no-such-folder', 'j.jsonl')]);
    expect(run.stderr).not.toMatch(/\.tmp'/);
    expect(run.stderr).toMatch(/^next: /m);
  });
});
