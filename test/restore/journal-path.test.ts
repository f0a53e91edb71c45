import { chmod, link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextStepFor } from '../../src/cli/error-guide.js';
import { outputFolder } from '../../src/cli/output-path.js';
import { isRabbitError } from '../../src/core/errors.js';
import { WriteJournal } from '../../src/restore/write-journal.js';
import { PROTO, damagedArchiveFixture, errorOf, sha256 } from './restore-helpers.js';

/**
 * Where --journal points is the user's choice, and so is what is there already: a folder, a
 * device, a folder that is not there. Each is told as what it is, with a next step that names
 * another path or mends the one given, never one that removes what the user named.
 */
const fixture = damagedArchiveFixture();

const DRY = [[], ['--dry-run']];

describe('a --journal that names no file of its own', () => {
  it.each([
    ['a folder of the user', 'folder', 'a folder'],
    ['the working folder (.)', '.', 'a folder'],
    ['a device (/dev/null)', '/dev/null', 'a device'],
  ])(
    '%s is a usage error that says --journal names a file, sends nothing and removes nothing',
    async (_, given, kind) => {
      const folder = join(fixture.dir, 'Documents');
      await mkdir(folder);
      await writeFile(join(folder, 'thesis.txt'), 'years of work');
      const journal = given === 'folder' ? folder : given;
      for (const extra of DRY) {
        const run = await fixture.restore(['--journal', journal, ...extra], { json: true, cwd: folder });
        expect({ extra, code: run.code }).toEqual({ extra, code: 2 });
        const error = errorOf(run.stdout);
        expect(error.code).toBe('USAGE');
        expect(error.message).toBe(`--journal names a file: ${journal} is ${kind}`);
        expect(error.next).toMatch(/^name a new file with --journal/);
        expect(run.stdout + run.stderr).not.toMatch(/\brm\b/);
      }
      expect(await readdir(folder)).toEqual(['thesis.txt']);
      expect((await readdir(fixture.dir)).sort()).toEqual(['Documents', 'a.zip']);
      expect(fixture.service.stats.requests).toBe(0);
    },
  );

  it('in a folder that does not exist is refused before anything is sent, with the mkdir -p the export gives', async () => {
    const parent = join(fixture.dir, 'no such folder');
    for (const extra of DRY) {
      const run = await fixture.restore(['--journal', join(parent, 'j.jsonl'), ...extra], { json: true });
      expect({ extra, code: run.code }).toEqual({ extra, code: 2 });
      const error = errorOf(run.stdout);
      expect(error.code).toBe('OUTPUT_PARENT_MISSING');
      expect(error.next).toContain(`mkdir -p '${parent}'`);
      expect(run.stderr).not.toMatch(/ENOENT|\.tmp/);
    }
    expect((await readdir(fixture.dir)).sort()).toEqual(['a.zip']);
    expect(fixture.service.stats.requests).toBe(0);
  });

  it('under a file (a.zip/j) is refused as a path under a file, not as an unreadable journal to move away', async () => {
    const before = await sha256(fixture.archive);
    for (const extra of DRY) {
      const run = await fixture.restore(['--journal', join(fixture.archive, 'j.jsonl'), ...extra], { json: true });
      expect({ extra, code: run.code }).toEqual({ extra, code: 2 });
      const error = errorOf(run.stdout);
      expect(error.code).toBe('OUTPUT_KIND');
      expect(error.next).toContain(`not under the file ${fixture.archive}`);
      expect(run.stderr).not.toMatch(/ENOTDIR|\bmv\b|\brm\b/);
    }
    expect(await sha256(fixture.archive)).toBe(before);
    expect(fixture.service.stats.requests).toBe(0);
  });
});

describe('a --journal file that is refused is never advised away with rm', () => {
  it('a text file that the group may write is told as not a journal (what it holds is looked at first)', async () => {
    const notes = join(fixture.dir, 'notes.txt');
    await writeFile(notes, 'my notes\n');
    await chmod(notes, 0o664);
    const run = await fixture.restore(['--journal', notes], { json: true });
    expect(run.code).toBe(2);
    expect(errorOf(run.stdout).code).toBe('NOT_A_JOURNAL');
    expect(await readFile(notes, 'utf8')).toBe('my notes\n');
  });

  it('a journal of the user that the group may write is still refused, and mended with chmod 600', async () => {
    const journal = join(fixture.dir, 'j.jsonl');
    const start = `${JSON.stringify({ t: 'start', baseUrl: fixture.service.baseUrl, prototype: PROTO, at: 'x' })}\n`;
    await writeFile(journal, start);
    await chmod(journal, 0o664);
    const run = await fixture.restore(['--journal', journal], { json: true });
    expect(run.code).not.toBe(0);
    const error = errorOf(run.stdout);
    expect(error.code).toBe('UNSAFE_PATH');
    expect(error.next).toContain(`chmod 600 ${journal}`);
    expect(run.stderr).not.toMatch(/\brm\b/);
    expect(await readFile(journal, 'utf8')).toBe(start);
    for (const method of ['POST', 'PUT', 'DELETE']) expect(fixture.service.stats.byMethod.get(method) ?? 0).toBe(0);
  });

  it('a symlink is still refused, and the next step names --journal, not rm', async () => {
    const target = join(fixture.dir, 'real.jsonl');
    await writeFile(target, '');
    const journal = join(fixture.dir, 'j.jsonl');
    await symlink(target, journal);
    for (const extra of DRY) {
      const run = await fixture.restore(['--journal', journal, ...extra], { json: true });
      expect(run.code).not.toBe(0);
      const error = errorOf(run.stdout);
      expect(error.code).toBe('UNSAFE_PATH');
      expect(error.next).toMatch(/--journal/);
      expect(run.stderr).not.toMatch(/\brm\b/);
    }
    expect(await readFile(target, 'utf8')).toBe('');
    expect(fixture.service.stats.requests).toBe(0);
  });

  it('a folder named with --out that is a symlink gets no rm either; the work folder the tool makes keeps its own', async () => {
    const real = join(fixture.dir, 'real');
    await mkdir(real);
    const linked = join(fixture.dir, 'out');
    await symlink(real, linked);
    const error = await outputFolder(linked, { flag: '--out', force: false }).catch((caught: unknown) => caught);
    if (!isRabbitError(error, 'UNSAFE_PATH')) throw new Error(`expected UNSAFE_PATH, got ${String(error)}`);
    expect(nextStepFor(error)).toMatch(/--out/);
    expect(nextStepFor(error)).not.toMatch(/\brm\b/);
  });
});

describe('the journal opened for writing', () => {
  it('is refused when it is by then the archive itself (made a hard link to it after the check)', async () => {
    const before = await sha256(fixture.archive);
    const journal = join(fixture.dir, 'j.jsonl');
    await link(fixture.archive, journal);
    const opened = await WriteJournal.open(
      journal,
      { baseUrl: fixture.service.baseUrl, prototype: PROTO },
      { created: new Map(), unfinished: 0 },
      fixture.archive,
    ).catch((error: unknown) => error);
    expect(isRabbitError(opened, 'NOT_A_JOURNAL')).toBe(true);
    expect(await sha256(fixture.archive)).toBe(before);
  });
});
