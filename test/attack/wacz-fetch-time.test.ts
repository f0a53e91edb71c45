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
 * An archive whose manifest gives some entries a `fetchedAt` no export writes: a year of six
 * digits, a negative year, a bare number Date.parse takes for a year, a time after the export
 * finished. Judged by Python (package_judge.py): every CDXJ timestamp is 14 digits, and those
 * records are dated as records of an archive without fetch times are, by the export's bounds.
 */
const CRAFT = fileURLToPath(new URL('./package_craft.py', import.meta.url));
const JUDGE = fileURLToPath(new URL('../convert/package_judge.py', import.meta.url));

const ABSURD: Record<string, string> = {
  'prototypes.json': '+275760-09-13T00:00:00.000Z',
  'prototypes/3/r9/discussions.json': '-000001-01-01T00:00:00Z',
  'prototypes/42/r2/pages.json': '1',
  'prototypes/42/r2/layers.json': '2999-01-01T00:00:00.000Z',
};

let dir: string;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-wacz-time-'));
  const sample = await exportSample(dir);
  archive = join(dir, 'absurd.zip');
  const set = Object.fromEntries(Object.entries(ABSURD).map(([path, at]) => [path, { fetchedAt: at }]));
  const run = await runTool(python(), [CRAFT, sample, archive, JSON.stringify({ set })]);
  expect(run.code, run.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a WACZ of an archive whose fetch times are absurd', () => {
  it('dates those records by the export, and every index timestamp is 14 digits', async () => {
    const out = join(dir, 'out');
    const report = await convertArchive({ archive, out, to: 'wacz', check: true });
    const run = await runTool(python(), [JUDGE, 'wacz', join(out, 'absurd.wacz')]);
    expect(run.code, run.stderr).toBe(0);
    const judged = JSON.parse(run.stdout) as { faults: string[]; bounded: number };
    expect(judged.faults).toEqual([]);
    expect(judged.bounded).toBe(Object.keys(ABSURD).length);
    expect(report.notes.join('\n')).toMatch(
      new RegExp(`^${Object.keys(ABSURD).length} of \\d+ records are dated at the export's start`, 'm'),
    );
  });
});
