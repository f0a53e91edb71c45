import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { dataOffsetOf, flipByte } from '../zip/zip-bytes.js';
import { readArchive } from '../helpers/archive.js';
import { exportSample } from './helpers.js';

let dir: string | undefined;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-convert-cli-'));
  archive = await exportSample(dir);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

// In-process, through convert's own registration, where a run's exit code, files and what its
// output contains are judged; the built CLI, spawned, where all of stdout must be the one --json
// record and for commander's usage errors.
describe('rabbit-export convert', () => {
  it('converts every prototype, prints a summary per prototype and exits 0', async () => {
    const out = join(await tempDir(), 'drawio');
    const run = await runCli(['convert', archive, '--to', 'drawio', '--out', out], { register: registerConvert });
    expect(run.code).toBe(0);
    expect((await readdir(out)).filter((f) => f.endsWith('.drawio'))).toHaveLength(5);
    expect(run.stdout).toMatch(/^ok +3 foo type -> 3-foo-type\.drawio$/m);
    expect(run.stdout).toContain('drawn as plain rectangles: carousel x1');
    expect(run.stdout).toContain('3 characters XML cannot hold were dropped');
    expect(run.stdout).toContain('5 of 5 prototypes written');
    const report = JSON.parse(await readFile(join(out, 'convert-report.json'), 'utf8')) as {
      complete: boolean;
      prototypes: unknown[];
    };
    expect(report).toMatchObject({ complete: true, to: 'drawio', rendering: true });
    expect(report.prototypes).toHaveLength(5);
  });

  it('with --prototype and --json converts only those and prints the report as one line', async () => {
    const out = join(await tempDir(), 'drawio');
    const run = await runCli([
      'convert',
      archive,
      '--to',
      'drawio',
      '--out',
      out,
      '--prototype',
      '17',
      '--prototype',
      '42',
      '--no-rendering',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { rendering: boolean; prototypes: { id: string }[] };
    expect(report.rendering).toBe(false);
    expect(report.prototypes.map((p) => p.id)).toEqual(['17', '42']);
    expect((await readdir(out)).sort()).toEqual([
      '17-shop-i-beta-i-friends-日本語.drawio',
      '42-alt-api-prototyp.drawio',
      'convert-report.json',
    ]);
  });

  it('exits 3 when a prototype could not be fully converted, naming what and why', async () => {
    const work = await tempDir();
    const damaged = join(work, 'damaged.zip');
    await copyFile(archive, damaged);
    const { manifest } = await readArchive(damaged);
    const entry = `prototypes/17/r${manifest.prototypes['17']!.revision}/pages/page1.json`;
    await flipByte(damaged, (await dataOffsetOf(damaged, entry)) + 1);
    const run = await runCli(['convert', damaged, '--to', 'drawio', '--out', join(work, 'out')], {
      register: registerConvert,
    });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^INCOMPLETE 17 /m);
    expect(run.stdout).toContain('skipped page page1:');
  });

  it('--to svg prints a target naming no page as a sentence and each dropped character once', async () => {
    const out = join(await tempDir(), 'svg');
    const run = await runCli(['convert', archive, '--to', 'svg', '--out', out, '--prototype', '3'], {
      register: registerConvert,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^ {4}note: element element\d+ on page page0001 links to page999, which is not a page of this prototype, so it has no link$/m,
    );
    expect(run.stdout).toContain('    3 characters XML cannot hold were dropped');
  });

  it('with a damaged pages.json still writes every page, and says where their order comes from', async () => {
    const work = await tempDir();
    const damaged = join(work, 'damaged.zip');
    await copyFile(archive, damaged);
    const { manifest } = await readArchive(damaged);
    const entry = `prototypes/3/r${manifest.prototypes['3']!.revision}/pages.json`;
    await flipByte(damaged, (await dataOffsetOf(damaged, entry)) + 1);
    const run = await runCli(['convert', damaged, '--to', 'drawio', '--out', join(work, 'out'), '--prototype', '3'], {
      register: registerConvert,
    });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^INCOMPLETE 3 foo type -> 3-foo-type\.drawio$/m);
    expect(run.stdout).toContain(`    skipped the list of pages: ${entry} in damaged.zip is damaged`);
    expect(run.stdout).toMatch(/^ {4}note: the page order /m);
    expect(run.stdout).toContain(', 3 discussions');
    expect(run.stdout).not.toContain('skipped discussion');
    expect(run.stdout).not.toContain('nothing to draw');
  });

  it.each([
    [['convert', 'x.zip', '--out', 'o'], "required option '--to"],
    [['convert', 'x.zip', '--to', 'png', '--out', 'o'], 'drawio, pdf, svg'],
    [['convert', 'x.zip', '--to', 'drawio'], "required option '-o, --out"],
  ])('%j is a usage error: exit 2', async (args, text) => {
    const run = await runCli(args, { register: 'all' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(text);
  });

  it('exits 2 for a prototype the archive does not hold and writes nothing', async () => {
    const out = join(await tempDir(), 'drawio');
    const run = await runCli(['convert', archive, '--to', 'drawio', '--out', out, '--prototype', '999'], {
      register: registerConvert,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('999');
    await expect(readdir(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('exits 1 for a file that is not an archive', async () => {
    const work = await tempDir();
    await writeFile(join(work, 'notes.zip'), 'not a zip at all');
    const run = await runCli(['convert', join(work, 'notes.zip'), '--to', 'drawio', '--out', join(work, 'out')], {
      register: registerConvert,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('not a zip archive');
  });
});
