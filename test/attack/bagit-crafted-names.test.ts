import { readdir, readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportSample } from '../convert/helpers.js';
import { runTool } from '../convert/tools.js';
import { python } from '../helpers/tools.js';

/**
 * Archives whose entry names the exporter's checks let through (a hostile server's ids can make
 * them) but that cannot all be files of one folder: a file and a folder of one name, and names
 * that differ only by case or by Unicode normalization, which collide on the case-insensitive,
 * normalizing file systems (APFS, NTFS) a bag is copied to. Each is written, `sha256sum -c`
 * accepts the manifest, no two payload names fold to one, and the report says which were renamed.
 */
const CRAFT = fileURLToPath(new URL('./package_craft.py', import.meta.url));

let dir: string;
let sample: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-bag-names-'));
  // The page bodies only: the names judged are the ones each test adds, not the sample's renderings.
  sample = await exportSample(dir, new Set(['json']));
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function craft(name: string, add: { path: string; body: string }[]): Promise<string> {
  const out = join(dir, `${name}.zip`);
  const run = await runTool(python(), [CRAFT, sample, out, JSON.stringify({ add })]);
  expect(run.code, run.stderr).toBe(0);
  return out;
}

/** How APFS and NTFS compare names: one case, one normalization. */
const folded = (name: string): string => name.normalize('NFC').toLowerCase();

async function judge(bag: string, bodies: readonly string[]): Promise<string[]> {
  const run = await runTool('sh', ['-c', 'cd "$1" && sha256sum --strict -c manifest-sha256.txt', 'sh', bag]);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const listed = (await readFile(join(bag, 'manifest-sha256.txt'), 'utf8'))
    .trimEnd()
    .split('\n')
    .map((line) => line.slice(66));
  const files: string[] = [];
  for (const entry of await readdir(join(bag, 'data'), { recursive: true, withFileTypes: true }))
    if (entry.isFile()) files.push(`data/${relative(join(bag, 'data'), join(entry.parentPath, entry.name))}`);
  expect([...listed].sort()).toEqual(files.sort());
  // No name folds onto another's, nor onto a folder another's path passes through.
  const names = listed.map(folded);
  expect(new Set(names).size).toBe(names.length);
  const folders = new Set(
    names.flatMap((name) =>
      name
        .split('/')
        .slice(1, -1)
        .map((_, i, all) => all.slice(0, i + 1).join('/')),
    ),
  );
  for (const name of names) expect(folders.has(name.split('/').slice(1).join('/')), name).toBe(false);
  const contents = await Promise.all(files.map((file) => readFile(join(bag, file), 'utf8')));
  for (const body of bodies) expect(contents, body).toContain(body);
  return listed;
}

describe('bag payload names that cannot all be files of one folder', () => {
  it.each([
    ['file first', ['odd/file', 'odd/file/inner.txt']],
    ['folder first', ['odd/file/inner.txt', 'odd/file']],
  ])('a file and a folder of one name (%s): both written, the second renamed and said so', async (label, paths) => {
    const bodies = paths.map((path) => `body of ${path}`);
    const archive = await craft(
      `file-folder-${label.replace(' ', '-')}`,
      paths.map((path, i) => ({ path, body: bodies[i] as string })),
    );
    const out = join(dir, `out-file-folder-${label.replace(' ', '-')}`);
    const report = await convertArchive({ archive, out, to: 'bagit', check: true });
    await judge(join(out, report.package?.file as string), bodies);
    expect(report.notes.join('\n')).toMatch(/1 entr(y|ies) .*another name/);
  });

  it('names that differ only by case or normalization: each its own name on a case-insensitive file system', async () => {
    const paths = [
      'odd/A.json',
      'odd/a.json',
      'odd/a.JSON',
      'odd/Readme/x.txt',
      'odd/readme/x.txt',
      'odd/caf\u00e9.txt',
      'odd/cafe\u0301.txt',
    ];
    const bodies = paths.map((path) => `body of ${path}`);
    const archive = await craft(
      'case',
      paths.map((path, i) => ({ path, body: bodies[i] as string })),
    );
    const out = join(dir, 'out-case');
    const report = await convertArchive({ archive, out, to: 'bagit', check: true });
    await judge(join(out, report.package?.file as string), bodies);
    expect(report.notes.join('\n')).toMatch(/\d+ entr(y|ies) .*another name/);
  });
});
