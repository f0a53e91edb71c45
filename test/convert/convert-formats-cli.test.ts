import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOffsetOf, flipByte } from '../zip/zip-bytes.js';
import { readArchive } from '../helpers/archive.js';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { exportSample } from './helpers.js';

/**
 * convert --to pdf and --to svg follow drawio's rules: a report, the same exit codes. In-process
 * through convert's registration, but for --json, whose stdout must be the one record.
 */
let dir: string | undefined;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-convert-formats-'));
  archive = await exportSample(dir);
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('rabbit-export convert --to pdf|svg', () => {
  it('--to pdf writes a binder per prototype, prints each and exits 0', async () => {
    const out = join(await tempDir(), 'pdf');
    const run = await runCli(['convert', archive, '--to', 'pdf', '--out', out], { register: registerConvert });
    expect(run.code).toBe(0);
    expect((await readdir(out)).filter((f) => f.endsWith('.pdf'))).toHaveLength(5);
    expect(run.stdout).toMatch(/^ok +3 foo type -> 3-foo-type\.pdf$/m);
    expect(run.stdout).toContain('5 of 5 prototypes written');
    expect(run.stdout).toContain('as PDF binders');
    const report = JSON.parse(await readFile(join(out, 'convert-report.json'), 'utf8')) as { to: string };
    expect(report.to).toBe('pdf');
  });

  it('--to svg --prototype writes only that folder of pages', async () => {
    const out = join(await tempDir(), 'svg');
    const run = await runCli(['convert', archive, '--to', 'svg', '--out', out, '--prototype', '42', '--json'], {
      register: registerConvert,
    });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { to: string; prototypes: { id: string; file: string }[] };
    expect(report.to).toBe('svg');
    expect(report.prototypes).toEqual([expect.objectContaining({ id: '42', file: '42-alt-api-prototyp' })]);
    expect((await readdir(join(out, '42-alt-api-prototyp'))).sort()).toEqual(['01-page2200.svg', '02-page15.svg']);
  });

  it.each(['pdf', 'svg'])('--to %s exits 3 when a prototype could not be fully converted', async (to) => {
    const work = await tempDir();
    const damaged = join(work, 'damaged.zip');
    await copyFile(archive, damaged);
    const { manifest } = await readArchive(damaged);
    const entry = `prototypes/17/r${manifest.prototypes['17']!.revision}/pages/page1.png`;
    await flipByte(damaged, (await dataOffsetOf(damaged, entry)) + 30);
    const run = await runCli(['convert', damaged, '--to', to, '--out', join(work, 'out')], {
      register: registerConvert,
    });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^INCOMPLETE 17 /m);
    expect(run.stdout).toContain('skipped the rendering of page page1:');
  });
});
