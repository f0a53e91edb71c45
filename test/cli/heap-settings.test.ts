import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const FLAG_LOG = fileURLToPath(new URL('../helpers/v8-flag-log.mjs', import.meta.url));

/** The flags one run of the built CLI set in V8 while it ran. */
async function flagsSetBy(args: string[], nodeOptions = ''): Promise<{ code: number | null; flags: string[] }> {
  const log = join(await tempDir(), 'flags.log');
  await writeFile(log, '');
  const run = await runCli(args, { env: { NODE_OPTIONS: `--import=${FLAG_LOG} ${nodeOptions}`.trim(), RABBIT_V8_FLAG_LOG: log } });
  return { code: run.code, flags: (await readFile(log, 'utf8')).split('\n').filter(Boolean) };
}

describe('heap settings (src/core/v8-heap.ts)', () => {
  it('are applied when a command runs, here a verify that fails at once', async () => {
    const { code, flags } = await flagsSetBy(['verify', join(await tempDir(), 'missing.zip')]);
    expect(code).not.toBe(0);
    expect(flags).toContain('--heap-growing-percent=100');
  });

  it('are left alone by --version and --help, which only print', async () => {
    expect(await flagsSetBy(['--version'])).toEqual({ code: 0, flags: [] });
    expect(await flagsSetBy(['export', '--help'])).toEqual({ code: 0, flags: [] });
  });

  it('give way to a setting on the command line', async () => {
    const { flags } = await flagsSetBy(['verify', join(await tempDir(), 'missing.zip')], '--heap-growing-percent=50');
    expect(flags).not.toContain('--heap-growing-percent=100');
  });
});
