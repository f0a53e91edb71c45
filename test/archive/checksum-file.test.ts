import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256OfFile } from '../../src/archive/checksum-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-sum-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** GNU coreutils' answer, which every user can ask for. */
function sha256sum(file: string): string {
  return execFileSync('sha256sum', ['--binary', file], { encoding: 'utf8' }).split(' ')[0] as string;
}

describe('sha256OfFile', () => {
  it.each([
    ['an empty file', 0],
    ['a file smaller than one read', 1000],
    ['a file of exactly one read', 1024 * 1024],
    ['a file of several reads and a bit', 2.5 * 1024 * 1024 + 7],
  ])('agrees with sha256sum on %s', async (_what, size) => {
    const file = join(dir, 'f.bin');
    await writeFile(file, randomBytes(size));
    expect(await sha256OfFile(file)).toBe(sha256sum(file));
  });

  it('rejects for a file that is not there', async () => {
    await expect(sha256OfFile(join(dir, 'missing.zip'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
