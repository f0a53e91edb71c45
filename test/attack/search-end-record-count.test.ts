import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { partHead, PART_TAIL, partsFile, recordLine } from '../../src/search/search-record.js';
import { runCli } from '../helpers/cli.js';
import { plainZip } from '../helpers/plain-zip.js';
import { BARE_MANIFEST } from '../search/bare-manifest.js';

/**
 * Search finds its index and the manifest's head by walking the central directory back from its
 * end; every other command reads the directory forward from its start, as many records as the end
 * record counts. A zip whose end record counts fewer records than the directory holds shows ls a
 * zip without its last records (no manifest.json: ARCHIVE_CORRUPT), and one that counts more shows
 * it a directory cut short (ARCHIVE_CORRUPT): search answered both from the index all the same,
 * though docs/search.md says it refuses what ls refuses, and lists no such exception.
 */

const PART = [
  partHead('5'),
  recordLine(
    {
      kind: 'element',
      field: 'text',
      page: 'p1',
      layer: '',
      id: 'e1',
      target: 'prototypes/5/index.html#page-p1',
      text: 'Coupon code',
    },
    'coupon code',
  ),
  PART_TAIL,
].join('');

/** The export's order: bodies, the index, index.html, the manifest. */
const ENTRIES: Array<[string, string]> = [
  ...Array.from({ length: 40 }, (_, i): [string, string] => [`prototypes/5/r1/pages/p${i}.json`, `{"name":"p${i}"}`]),
  ['search/search-box.js', '// box'],
  ['search/prototype-5.js', PART],
  ['search/index.js', partsFile(['5'])],
  ['index.html', '<!doctype html>'],
  ['manifest.json', BARE_MANIFEST],
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-end-count-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The zip with its end record's two counts (this disk's, and in all) set to `count`. */
async function zipCounting(count: number): Promise<string> {
  const bytes = plainZip(ENTRIES.map(([name, text]) => ({ name, data: Buffer.from(text) })));
  const end = bytes.length - 22;
  bytes.writeUInt16LE(count, end + 8);
  bytes.writeUInt16LE(count, end + 10);
  const path = join(dir, `count-${count}.zip`);
  await writeFile(path, bytes);
  return path;
}

async function outcome(command: 'ls' | 'search', archive: string): Promise<{ code: number | null; error: unknown }> {
  const args = command === 'ls' ? ['ls', archive, '--json'] : ['search', archive, 'coupon', '--json', '--quiet'];
  const run = await runCli(args, { register: command === 'ls' ? registerLs : registerSearch });
  const summary = JSON.parse(run.stdout.trimEnd().split('\n').at(-1) ?? '{}') as { error?: unknown };
  return { code: run.code, error: summary.error };
}

describe('search refuses, as ls does, a zip whose end record miscounts its directory', () => {
  it('as written, both read it', async () => {
    const archive = await zipCounting(ENTRIES.length);
    expect(await outcome('ls', archive)).toEqual({ code: 0, error: undefined });
    expect(await outcome('search', archive)).toEqual({ code: 0, error: undefined });
  });

  it.each([
    ['fewer records than it holds (the index and manifest past the count)', 40],
    ['one record more than it holds', ENTRIES.length + 1],
  ])('counting %s', async (_what, count) => {
    const archive = await zipCounting(count);
    const ls = await outcome('ls', archive);
    expect(ls).toMatchObject({ code: 1, error: { code: 'ARCHIVE_CORRUPT' } });
    expect(await outcome('search', archive)).toEqual(ls);
  });
});
