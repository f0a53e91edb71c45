import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { checkWacz } from '../../src/convert/wacz/check-wacz.js';
import { isRabbitError } from '../../src/core/errors.js';
import { exportSample } from '../convert/helpers.js';
import { runTool } from '../convert/tools.js';
import { python } from '../helpers/tools.js';

/**
 * `--check` (and verify) on a WACZ changed after it was written by Python's zipfile, each change
 * with the datapackage's digests brought in line so that only the change is wrong: an index line
 * that is no CDXJ, an offset that is a number rather than a string, resources that are no list, a
 * file the datapackage does not list, a WARC taken away while the index still points into it.
 * Each is refused as PACKAGE_INVALID naming the part, never a bare TypeError or a pass.
 */
const TAMPER = fileURLToPath(new URL('./wacz_tamper.py', import.meta.url));

let dir: string;
let wacz: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-wacz-tampered-'));
  const archive = await exportSample(dir);
  await convertArchive({ archive, out: join(dir, 'out'), to: 'wacz' });
  wacz = join(dir, 'out', 'archive.wacz');
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('--check of a WACZ tampered with after it was written', () => {
  it('accepts the WACZ as written', async () => {
    await expect(checkWacz(wacz)).resolves.toMatchObject({ files: 4 });
  });

  it.each([
    ['garbage-index-line', /index\.cdx/],
    ['number-offset', /index\.cdx/],
    ['resources-not-a-list', /datapackage\.json/],
    ['extra-file', /extra\.txt/],
    ['warc-removed', /no WARC/],
  ])('refuses %s, naming the part', async (kind, named) => {
    const tampered = join(dir, `${kind}.wacz`);
    const run = await runTool(python(), [TAMPER, wacz, tampered, kind]);
    expect(run.code, run.stderr).toBe(0);
    const error = await checkWacz(tampered).catch((caught: unknown) => caught);
    expect(isRabbitError(error) && error.code, String(error)).toBe('PACKAGE_INVALID');
    expect((error as Error).message).toMatch(named);
  });
});
