import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../../src/archive/open-archive.js';
import { convertToPackage } from '../../src/convert/convert-package.js';
import { bagit } from '../../src/convert/formats/bagit.js';
import { RabbitError } from '../../src/core/errors.js';
import { runCli } from '../helpers/cli.js';
import { exportSample } from './helpers.js';

/**
 * What a package run says of itself: a package that does not hold every body the archive lists is
 * no whole copy of it (incomplete, exit 3, and the count in the summary), and one that fails its
 * read-back (--check) does not stay at --out under the name of a finished package.
 */
let dir: string;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-package-outcome-'));
  archive = await exportSample(dir);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a package of an archive that lacks a body its manifest lists', () => {
  it.each(['wacz', 'bagit'])(
    '--to %s is incomplete: exit 3, complete false, the body counted as left out',
    async (to) => {
      const lacking = join(dir, `lacking-${to}.zip`);
      await copyFile(archive, lacking);
      // Info-ZIP's zip takes one page rendering out; the manifest still lists it.
      const removed = spawnSync('zip', ['-q', '-d', lacking, 'prototypes/1001/r*/pages/page0001.html']);
      expect(removed.status, removed.stderr.toString()).toBe(0);
      const out = join(dir, `out-lacking-${to}`);
      const run = await runCli(['convert', lacking, '--to', to, '--out', out, '--json'], { register: 'all' });
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
      expect({ code: run.code, complete: summary['complete'], ok: summary['ok'] }).toEqual({
        code: 3,
        complete: false,
        ok: false,
      });
      expect(summary['package']).toMatchObject({ leftOut: 1 });
      expect(JSON.stringify(summary['notes'])).toMatch(/1 (bodies|entries) the manifest lists are missing or damaged/);
    },
  );

  it('a whole archive packages whole: exit 0, nothing left out', async () => {
    const out = join(dir, 'out-whole');
    const run = await runCli(['convert', archive, '--to', 'bagit', '--out', out, '--json'], { register: 'all' });
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect({ code: run.code, complete: summary['complete'] }).toEqual({ code: 0, complete: true });
    expect(summary['package']).toMatchObject({ leftOut: 0 });
  });
});

describe('a package that fails its read-back', () => {
  it('is set aside under a name that says so, and the error names it', async () => {
    const out = join(dir, 'out-failing');
    await mkdir(out);
    // The bag as written, then found changed when read back (a disk, another process).
    const failing = {
      ...bagit,
      checkPackage: () => Promise.reject(new RabbitError('PACKAGE_INVALID', 'the bag is not valid: data/x changed')),
    };
    const opened = await openArchive(archive);
    const error = await convertToPackage(failing, opened, { out, check: true })
      .catch((caught: unknown) => caught)
      .finally(() => opened.close());
    expect(error).toBeInstanceOf(RabbitError);
    expect((error as RabbitError).message).toMatch(/data\/x changed; the package was moved to archive\.failed-check$/);
    // Nothing by the package's own name, and no report claiming a finished conversion.
    expect((await readdir(out)).sort()).toEqual(['archive.failed-check']);
  });
});
