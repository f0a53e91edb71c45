import { cp, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBag } from '../../src/convert/bagit/check-bag.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { isRabbitError } from '../../src/core/errors.js';
import { exportSample } from '../convert/helpers.js';

/**
 * `--check` on a bag changed after it was written, in the ways RFC 8493 3 says make a bag
 * invalid (a payload file no manifest lists) and in ways that take away what the check reads: it
 * refuses each with PACKAGE_INVALID naming the file, never with a bare file-system error.
 */
let dir: string;
let bag: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-bag-tampered-'));
  // The page bodies only: what a bag is checked for does not depend on its size, and each of the
  // tampered copies below is copied and hashed whole.
  const archive = await exportSample(dir, new Set(['json']));
  const out = join(dir, 'out');
  await convertArchive({ archive, out, to: 'bagit' });
  bag = join(out, 'archive');
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const TAMPERINGS: [string, (copy: string) => Promise<void>, RegExp][] = [
  ['a payload file no manifest lists', (copy) => writeFile(join(copy, 'data', 'added.txt'), 'x'), /data\/added\.txt/],
  [
    'a payload file in a new folder',
    async (copy) => {
      await cp(join(copy, 'data', 'prototypes'), join(copy, 'data', 'more'), { recursive: true });
    },
    /data\/more\//,
  ],
  ['the tag manifest removed', (copy) => unlink(join(copy, 'tagmanifest-sha256.txt')), /tagmanifest-sha256\.txt/],
  ['the payload manifest removed', (copy) => unlink(join(copy, 'manifest-sha256.txt')), /manifest-sha256\.txt/],
  [
    'a payload file swapped for a link',
    async (copy) => {
      await unlink(join(copy, 'data', 'prototypes.json'));
      await symlink(join(bag, 'data', 'prototypes.json'), join(copy, 'data', 'prototypes.json'));
    },
    /data\/prototypes\.json/,
  ],
];

describe('--check of a bag tampered with after it was written', () => {
  it('accepts the bag as written', async () => {
    await expect(checkBag(bag)).resolves.toMatchObject({ files: 4 });
  });

  it.each(TAMPERINGS)('refuses %s, naming it', async (label, tamper, named) => {
    const copy = join(dir, label.replace(/\W+/g, '-'));
    await cp(bag, copy, { recursive: true });
    await tamper(copy);
    const error = await checkBag(copy).catch((caught: unknown) => caught);
    expect(isRabbitError(error) && error.code, String(error)).toBe('PACKAGE_INVALID');
    expect((error as Error).message).toMatch(named);
  });
});
