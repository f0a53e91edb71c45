import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerDemo } from '../../src/cli/commands/demo.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { checkOutputFile, prepareOutputFolder } from '../../src/cli/output-path.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';

let service: FakeService;
let dir: string;
useFakeService({}, (fixture) => ({ service, dir } = fixture));

const codeOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (isRabbitError(error) ? error.code : String(error)),
  );

describe('the output rule (git clone, cp)', () => {
  it('a file: its folder must exist, an existing file needs --force, a folder is not a file', async () => {
    const base = await tempDir();
    await expect(codeOf(checkOutputFile(join(base, 'a.zip'), { flag: '--out', force: false }))).resolves.toBe('ok');
    await expect(codeOf(checkOutputFile(join(base, 'no', 'a.zip'), { flag: '--out', force: true }))).resolves.toBe(
      'OUTPUT_PARENT_MISSING',
    );
    await writeFile(join(base, 'a.zip'), 'x');
    await expect(codeOf(checkOutputFile(join(base, 'a.zip'), { flag: '--out', force: false }))).resolves.toBe(
      'OUTPUT_EXISTS',
    );
    await expect(codeOf(checkOutputFile(join(base, 'a.zip'), { flag: '--out', force: true }))).resolves.toBe('ok');
    await expect(codeOf(checkOutputFile(join(base, 'a.zip', 'b.zip'), { flag: '--out', force: true }))).resolves.toBe(
      'OUTPUT_KIND',
    );
    await mkdir(join(base, 'd.zip'));
    await expect(codeOf(checkOutputFile(join(base, 'd.zip'), { flag: '--out', force: true }))).resolves.toBe(
      'OUTPUT_KIND',
    );
  });

  it('a folder: made when its parent exists, never its parents; not empty needs --force; a file is not a folder', async () => {
    const base = await tempDir();
    await expect(codeOf(prepareOutputFolder(join(base, 'a', 'b'), { flag: '--out', force: true }))).resolves.toBe(
      'OUTPUT_PARENT_MISSING',
    );
    await expect(stat(join(base, 'a'))).rejects.toThrow();
    await expect(codeOf(prepareOutputFolder(join(base, 'a'), { flag: '--out', force: false }))).resolves.toBe('ok');
    expect((await stat(join(base, 'a'))).isDirectory()).toBe(true);
    await expect(codeOf(prepareOutputFolder(join(base, 'a'), { flag: '--out', force: false }))).resolves.toBe('ok');
    await writeFile(join(base, 'a', 'doc.drawio'), 'mine');
    await expect(codeOf(prepareOutputFolder(join(base, 'a'), { flag: '--out', force: false }))).resolves.toBe(
      'OUTPUT_EXISTS',
    );
    await expect(
      codeOf(prepareOutputFolder(join(base, 'a'), { flag: '--dir', force: false, mayHoldFiles: true })),
    ).resolves.toBe('ok');
    await expect(
      codeOf(prepareOutputFolder(join(base, 'a', 'doc.drawio'), { flag: '--out', force: true })),
    ).resolves.toBe('OUTPUT_KIND');
  });
});

describe('every command follows it', () => {
  const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

  it('export: missing parent and existing file are refused with exit 2 and a next step', async () => {
    const missing = await runCli(['export', '--out', join(dir, 'no', 'a.zip')], {
      register: registerExport,
      env: env(),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`next: create the folder first (mkdir -p ${join(dir, 'no')})`);
    await writeFile(join(dir, 'a.zip'), 'earlier');
    const exists = await runCli(['export', '--out', join(dir, 'a.zip')], { register: registerExport, env: env() });
    expect(exists.code).toBe(2);
    expect(exists.stderr).toContain('not replaced without --force');
    expect(await readFile(join(dir, 'a.zip'), 'utf8')).toBe('earlier');
  });

  it('a file where the folder of --out belongs: the next step is a path in a folder, not "a folder" for --out', async () => {
    await writeFile(join(dir, 'team'), 'mine');
    const run = await runCli(['export', '--out', join(dir, 'team', 'a.zip')], { register: registerExport, env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${join(dir, 'team')} is a file, where a folder belongs`);
    // An export given a folder as --out is refused in turn: "give the path of a folder" led there.
    expect(run.stderr).not.toContain('give the path of a folder');
    expect(run.stderr).toContain(
      `next: choose a path in a folder that exists, not under the file ${join(dir, 'team')}`,
    );
  });

  it('backup --dir: created when its parent exists, refused when the parent is missing', async () => {
    const made = await runCli(['backup', '--dir', join(dir, 'nightly')], { register: registerBackup, env: env() });
    expect(made.code).toBe(0);
    expect((await readdir(join(dir, 'nightly'))).filter((name) => name.endsWith('.zip'))).toHaveLength(1);
    const deep = await runCli(['backup', '--dir', join(dir, 'a', 'b')], { register: registerBackup, env: env() });
    expect(deep.code).toBe(2);
    expect(deep.stderr).toContain('does not exist');
  });

  it('backup --dir: --dry-run answers as a real night would, and a first night that fails leaves no folder', async () => {
    const planned = await runCli(['backup', '--dir', join(dir, 'later'), '--dry-run'], { register: registerBackup });
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('does not exist yet; the first backup creates it');
    const deep = await runCli(['backup', '--dir', join(dir, 'a', 'b'), '--dry-run'], { register: registerBackup });
    expect(deep.code).toBe(2);
    expect(deep.stderr).toContain(`the folder ${join(dir, 'a')} does not exist`);
    // No key: refused before anything is made.
    const keyless = await runCli(['backup', '--dir', join(dir, 'nokey')], { register: registerBackup, env: {} });
    expect(keyless.code).toBe(2);
    // The service refuses the key: the run started, made the folder, and takes it back.
    const refused = await runCli(['backup', '--dir', join(dir, 'refused')], {
      register: registerBackup,
      env: { RABBIT_API_KEY: service.keys.invalid, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(refused.code).toBe(1);
    expect((await readdir(dir)).filter((name) => ['later', 'nokey', 'refused', 'a'].includes(name))).toEqual([]);
  });

  it('convert: creates its folder, and never overwrites documents in a folder that is not empty without --force', async () => {
    const zip = join(dir, 'team.zip');
    expect((await runCli(['export', '--out', zip], { register: registerExport, env: env() })).code).toBe(0);
    const out = join(dir, 'drawio');
    const first = await runCli(['convert', zip, '--to', 'drawio', '--out', out], { register: registerConvert });
    expect(first.code).toBe(0);
    const [doc] = (await readdir(out)).filter((name) => name.endsWith('.drawio'));
    await writeFile(join(out, doc as string), 'edited by hand');
    const again = await runCli(['convert', zip, '--to', 'drawio', '--out', out], { register: registerConvert });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('--force');
    expect(await readFile(join(out, doc as string), 'utf8')).toBe('edited by hand');
    const forced = await runCli(['convert', zip, '--to', 'drawio', '--out', out, '--force'], {
      register: registerConvert,
    });
    expect(forced.code).toBe(0);
    expect(await readFile(join(out, doc as string), 'utf8')).not.toBe('edited by hand');
    const deep = await runCli(['convert', zip, '--to', 'drawio', '--out', join(dir, 'x', 'y')], {
      register: registerConvert,
    });
    expect(deep.code).toBe(2);
  });

  it('demo: refuses to replace an archive without --force, like export', async () => {
    const zip = join(dir, 'demo.zip');
    await writeFile(zip, 'earlier');
    const refused = await runCli(['demo', '--out', zip], { register: registerDemo });
    expect(refused.code).toBe(2);
    expect(await readFile(zip, 'utf8')).toBe('earlier');
    const replaced = await runCli(['demo', '--out', zip, '--force'], { register: registerDemo });
    expect(replaced.code).toBe(0);
  });
});
