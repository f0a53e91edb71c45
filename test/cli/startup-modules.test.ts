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
  'dist/api/ids.js',
  // --formats takes the formats of the table of kinds: two modules of data, which load nothing.
  'dist/api/kind-lists.js',
  'dist/api/resource-kinds.js',
  'dist/export/export-defaults.js',
  'dist/client/retry-policy.js',
  'dist/client/transfer-watchdog.js',
  'dist/client/outage-policy.js',
  'dist/backup/rotation.js',
];

/** The files of this package (dist/...) and the packages (by name) one run of the built CLI loads. */
async function modulesLoadedBy(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; files: string[]; packages: string[]; undici: string[] }> {
  const log = join(await tempDir(), 'modules.log');
  const run = await runCli(args, { env: { ...env, NODE_OPTIONS: `--import=${MODULE_LOG}`, RABBIT_MODULE_LOG: log } });
  const paths = (await readFile(log, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url));
  // By the innermost node_modules folder: wherever the packages are installed (or linked from).
  const packages = paths.flatMap((path) => /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1] ?? []);
  const files = paths.map((path) => relative(ROOT, path)).filter((path) => path.startsWith('dist/'));
  const undici = paths.flatMap((path) => /\/node_modules\/undici\/(.*)$/.exec(path)?.[1] ?? []);
  return {
    code: run.code,
    files: [...new Set(files)],
    packages: [...new Set(packages)].sort(),
    undici: [...new Set(undici)],
  };
}

const beyondCliAndCore = (files: string[]): string[] =>
  files.filter((file) => !file.startsWith('dist/cli/') && !file.startsWith('dist/core/'));

describe('start-up: what a command line loads', () => {
  it('--version loads commander and no command', async () => {
    const { code, files, packages } = await modulesLoadedBy(['--version']);
    expect(code).toBe(0);
    expect(packages).toEqual(['commander']);
    expect(files.filter((file) => file.startsWith('dist/cli/commands/'))).toEqual([]);
    expect(beyondCliAndCore(files)).toEqual([]);
  });

  it.each([['export'], ['backup']])('%s --help loads its flag definitions and none of the core', async (command) => {
    const { code, files, packages } = await modulesLoadedBy([command, '--help']);
    expect(code).toBe(0);
    expect(files).toContain(`dist/cli/commands/${command}.js`);
    expect(packages).toEqual(['commander']);
    expect(beyondCliAndCore(files).filter((file) => !FLAG_DEFAULTS.includes(file))).toEqual([]);
    // What only the action needs: the runner, key and proxy reading, the progress display.
    expect(files.filter((file) => /^dist\/cli\/(long-run|service-options|keys|progress)\.js$/.test(file))).toEqual([]);
  });

  it('the same log shows the core, undici and the rest once export runs', async () => {
    // A key and a port nobody listens on: the action loads everything it needs, then its first
    // request is refused (once: the retries would load nothing more, only wait).
    const { code, files, packages, undici } = await modulesLoadedBy(
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
    expect(files).toContain('dist/export/export-account.js');
    expect(files).toContain('dist/cli/long-run.js');
    // Reading an earlier archive (the zip reader, the streaming JSON parser) waits for --since.
    expect(packages).not.toContain('stream-json');
    expect(files).not.toContain('dist/archive/since-cache.js');
    // The HTML parser and the view builder wait for the first view, which comes long after the
    // first request (or never): loading them was some 60 ms of every export's start.
    expect(packages).not.toContain('parse5');
    expect(
      files.filter((file) => /^dist\/site\/(view-build|view-check|sanitize-html|decode-page)\.js$/.test(file)),
    ).toEqual([]);
  });
});
