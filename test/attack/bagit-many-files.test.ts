import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportSample } from '../convert/helpers.js';
import { runTool } from '../convert/tools.js';
import { python } from '../helpers/tools.js';

/**
 * A bag of more files per folder than one read of a folder returns (Node reads 32 entries at a
 * time): the folder bag passes its own --check, and a serialized bag holds every file its
 * manifest lists, counted by Python's zipfile and tarfile.
 */
const CRAFT = fileURLToPath(new URL('./package_craft.py', import.meta.url));
const COUNT = `
import json, sys, tarfile, zipfile
path = sys.argv[1]
if path.endswith('.zip'):
    names = [n for n in zipfile.ZipFile(path).namelist() if not n.endswith('/')]
    read = lambda n: zipfile.ZipFile(path).read(n)
else:
    t = tarfile.open(path)
    members = [m for m in t.getmembers() if m.isfile()]
    names = [m.name for m in members]
    read = lambda n: t.extractfile(n).read()
top = names[0].split('/')[0]
manifest = read(top + '/manifest-sha256.txt').decode('utf-8').splitlines()
print(json.dumps({"files": len(names), "listed": len(manifest)}))
`;

let dir: string;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-bag-many-'));
  // The page bodies only: the many files are the ones added below, not the sample's renderings.
  const sample = await exportSample(dir, new Set(['json']));
  archive = join(dir, 'many.zip');
  const add = Array.from({ length: 150 }, (_, i) => ({ path: `many/f${i}/x${i % 7}.txt`, body: `file ${i}` }));
  const run = await runTool(python(), [CRAFT, sample, archive, JSON.stringify({ add })]);
  expect(run.code, run.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a bag of many folders and files', () => {
  it('passes its own --check as a folder', async () => {
    const report = await convertArchive({ archive, out: join(dir, 'folder'), to: 'bagit', check: true });
    expect(report.package?.checked?.entries).toBe(report.package?.entries);
  });

  it.each(['zip', 'tar'] as const)('--serialize %s holds every file the manifest lists', async (as) => {
    const out = join(dir, as);
    const report = await convertArchive({ archive, out, to: 'bagit', serialize: as });
    const run = await runTool(python(), ['-c', COUNT, join(out, `many.${as}`)]);
    expect(run.code, run.stderr).toBe(0);
    const counted = JSON.parse(run.stdout) as { files: number; listed: number };
    expect(counted.listed).toBe(report.package?.entries);
    // The payload and the four tag files.
    expect(counted.files).toBe(counted.listed + 4);
  });
});
