import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { isRabbitError } from '../../src/core/errors.js';
import { exportSample } from '../convert/helpers.js';

/**
 * A careless `--out` with `--force` (convertArchive writes into a folder that is not empty, as
 * the command does with --force): the bag is named after the archive, so `--out` the archive's
 * own folder with `--serialize zip` names the bag's file as the archive is named, and a folder
 * bag's name can be the folder that holds the archive. The archive, maybe the only copy of the
 * account, is never replaced nor deleted, and neither is a folder of that name that is no bag.
 */
let dir: string;
let sample: string;
let sampleSha: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-bag-target-'));
  sample = await exportSample(dir);
  sampleSha = sha256(await readFile(sample));
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function refused(run: Promise<unknown>): Promise<void> {
  const error = await run.catch((caught: unknown) => caught);
  expect(isRabbitError(error) && error.code, String(error)).toBe('OUTPUT_KIND');
}

describe('a bag never takes the place of its own archive', () => {
  it('--serialize zip into the archive folder: the bag would be named as the archive, and is refused', async () => {
    const folder = join(dir, 'same-folder');
    await mkdir(folder);
    const archive = join(folder, 'team.zip');
    await copyFile(sample, archive);
    await refused(convertArchive({ archive, out: folder, to: 'bagit', serialize: 'zip' }));
    expect(sha256(await readFile(archive))).toBe(sampleSha);
    expect(await readdir(folder)).toEqual(['team.zip']);
  });

  it('a folder bag whose name is the folder holding the archive: refused, the archive kept', async () => {
    const out = join(dir, 'holder');
    await mkdir(join(out, 'team'), { recursive: true });
    const archive = join(out, 'team', 'team.zip');
    await copyFile(sample, archive);
    await refused(convertArchive({ archive, out, to: 'bagit' }));
    expect(sha256(await readFile(archive))).toBe(sampleSha);
  });

  it('a folder of the bag name that is no bag: refused, kept as it is', async () => {
    const out = join(dir, 'not-a-bag');
    await mkdir(join(out, 'archive'), { recursive: true });
    await writeFile(join(out, 'archive', 'notes.txt'), 'mine');
    await refused(convertArchive({ archive: sample, out, to: 'bagit' }));
    expect(await readFile(join(out, 'archive', 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('an earlier bag of the same name is replaced', async () => {
    const out = join(dir, 'again');
    await convertArchive({ archive: sample, out, to: 'bagit' });
    await writeFile(join(out, 'archive', 'data', 'stale.txt'), 'from before');
    const report = await convertArchive({ archive: sample, out, to: 'bagit', check: true });
    expect(report.package?.checked?.files).toBe(4);
  });
});
