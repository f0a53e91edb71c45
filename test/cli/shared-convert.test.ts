import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, lchown, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { writeAtomically } from '../../src/convert/write-output.js';
import { BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { exportSample } from '../convert/helpers.js';

const NOBODY = 65534;
let sample: string | undefined;
let archive: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
  sample = await mkdtemp(join(tmpdir(), 'rabbit-shared-convert-'));
  archive = await exportSample(sample);
});

afterAll(async () => {
  if (sample) await rm(sample, { recursive: true, force: true });
});

const modeOf = (path: string): string => execFileSync('stat', ['-c', '%a', path], { encoding: 'utf8' }).trim();

describe('convert on a machine shared with other users', () => {
  it('refuses an --out folder others can write to, and never writes through a .partial another user planted', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o755);
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'root only\n');
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const planted = join(shared, '3-foo-type.drawio.partial');
    await symlink(victim, planted);
    await lchown(planted, NOBODY, NOBODY);
    const run = await runCli(['convert', archive, '--to', 'drawio', '--out', shared, '--force', '--json'], {
      register: registerConvert,
    });
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as { error: { code: string } };
    expect(line.error.code).toBe('UNSAFE_PATH');
    expect(await readFile(victim, 'utf8')).toBe('root only\n');
  });

  it('writes each document under a fresh name, never opening a name planted beside it', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'root only\n');
    const target = join(dir, 'doc.drawio');
    await symlink(victim, `${target}.partial`);
    await writeAtomically(target, ['<mxfile/>']);
    expect(await readFile(victim, 'utf8')).toBe('root only\n');
    expect(await readFile(target, 'utf8')).toBe('<mxfile/>');
    expect(modeOf(target)).toBe('600');
  });

  it('makes documents 0600 and their folders 0700 under umask 000', async () => {
    const out = join(await tempDir(), 'svg');
    const args = ['convert', archive, '--to', 'svg', '--out', out];
    await promisify(execFile)('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, BIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '' },
    });
    expect(modeOf(out)).toBe('700');
    const entries = await readdir(out, { withFileTypes: true, recursive: true });
    const folders = entries.filter((entry) => entry.isDirectory());
    const files = entries.filter((entry) => entry.isFile());
    expect(folders.length).toBeGreaterThan(0);
    expect(files.length).toBeGreaterThan(folders.length);
    expect(new Set(folders.map((entry) => modeOf(join(entry.parentPath, entry.name))))).toEqual(new Set(['700']));
    expect(new Set(files.map((entry) => modeOf(join(entry.parentPath, entry.name))))).toEqual(new Set(['600']));
  });
});
