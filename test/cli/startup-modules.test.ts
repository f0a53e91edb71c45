import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODULE_LOG = fileURLToPath(new URL('../helpers/module-log.mjs', import.meta.url));

/**
 * Defining the flags of `export` and `backup` may load, besides src/cli and src/core, only the
 * modules whose defaults their help shows. The core, undici, ora and the streaming parsers load
 * when an action runs (issue 9: `--version` and `export --help` start nearly as fast as node).
 */
const FLAG_DEFAULTS = [
  'src/api/ids.ts',
  // --formats takes the formats of the table of kinds: two modules of data, which load nothing.
  'src/api/kind-lists.ts',
  'src/api/resource-kinds.ts',
  'src/export/export-defaults.ts',
  'src/client/retry-policy.ts',
  'src/client/transfer-watchdog.ts',
  'src/client/outage-policy.ts',
  'src/backup/rotation.ts',
];

/**
 * The source modules a file of dist/ carries. dist/ is bundled (scripts/build.mjs) and not minified:
 * esbuild opens each module's code with a comment naming its source, `// src/....ts`.
 */
async function sourcesIn(file: string): Promise<string[]> {
  return [...(await readFile(join(ROOT, file), 'utf8')).matchAll(/^\/\/ (src\/\S+\.ts)$/gm)].map(
    (match) => match[1] as string,
  );
}

/**
 * What one run of the built CLI loads: the files of dist/, the source modules they carry, and the
 * packages (by name).
 */
async function modulesLoadedBy(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; files: string[]; modules: string[]; packages: string[]; undici: string[] }> {
  const log = join(await tempDir(), 'modules.log');
  const run = await runCli(args, { env: { ...env, NODE_OPTIONS: `--import=${MODULE_LOG}`, RABBIT_MODULE_LOG: log } });
  const paths = (await readFile(log, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url));
  // By the innermost node_modules folder: wherever the packages are installed (or linked from).
  const packages = paths.flatMap((path) => /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1] ?? []);
  const files = [...new Set(paths.map((path) => relative(ROOT, path)).filter((path) => path.startsWith('dist/')))];
  const modules = (await Promise.all(files.map(sourcesIn))).flat();
  const undici = paths.flatMap((path) => /\/node_modules\/undici\/(.*)$/.exec(path)?.[1] ?? []);
  return {
    code: run.code,
    files,
    modules: [...new Set(modules)],
    packages: [...new Set(packages)].sort(),
    undici: [...new Set(undici)],
  };
}

const beyondCliAndCore = (modules: string[]): string[] =>
  modules.filter((module) => !module.startsWith('src/cli/') && !module.startsWith('src/core/'));

describe('start-up: what a command line loads', () => {
  it('--version loads commander and no command', async () => {
    const { code, files, modules, packages } = await modulesLoadedBy(['--version']);
    expect(code).toBe(0);
    expect(files).toContain('dist/cli/main.js');
    expect(modules).toContain('src/cli/main.ts');
    expect(packages).toEqual(['commander']);
    expect(modules.filter((module) => module.startsWith('src/cli/commands/'))).toEqual([]);
    expect(beyondCliAndCore(modules)).toEqual([]);
  });

  it.each([['export'], ['backup']])('%s --help loads its flag definitions and none of the core', async (command) => {
    const { code, modules, packages } = await modulesLoadedBy([command, '--help']);
    expect(code).toBe(0);
    expect(modules).toContain(`src/cli/commands/${command}.ts`);
    expect(packages).toEqual(['commander']);
    expect(beyondCliAndCore(modules).filter((module) => !FLAG_DEFAULTS.includes(module))).toEqual([]);
    // What only the action needs: the runner, key and proxy reading, the progress display.
    expect(modules.filter((module) => /^src\/cli\/(long-run|service-options|keys|progress)\.ts$/.test(module))).toEqual(
      [],
    );
  });

  it('the same log shows the core, undici and the rest once export runs', async () => {
    // A key and a port nobody listens on: the action loads everything it needs, then its first
    // request is refused (once: the retries would load nothing more, only wait).
    const { code, modules, packages, undici } = await modulesLoadedBy(
      ['export', '--out', join(await tempDir(), 'x.zip'), '--retries', '1'],
      {
        RABBIT_API_KEY: 'startup-test-key',
        RABBIT_BASE_URL: 'http://127.0.0.1:1',
      },
    );
    expect(code).toBe(1);
    expect(packages).toContain('undici');
    // undici through its documented entry point, its package index.
    expect(undici).toContain('index.js');
    expect(modules).toContain('src/export/export-account.ts');
    expect(modules).toContain('src/cli/long-run.ts');
    // The view pool is there, ready to start its threads; what they run is not.
    expect(modules).toContain('src/site/view-pool.ts');
    // Reading an earlier archive (the zip reader, the streaming JSON parser) waits for --since.
    expect(packages).not.toContain('stream-json');
    expect(modules).not.toContain('src/archive/since-cache.ts');
    // The HTML parser and the view builder wait for the first view, which comes long after the
    // first request (or never): loading them was some 60 ms of every export's start.
    expect(packages).not.toContain('parse5');
    expect(
      modules.filter((module) => /^src\/site\/(view-build|view-check|sanitize-html|decode-page)\.ts$/.test(module)),
    ).toEqual([]);
  });
});
