import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { ROOT, sampleService } from './page-examples.js';

// issue 45: the output the README shows for its first commands is what they print, made by this
// test. What differs from run to run (times, rates, sizes in KiB and MiB, the sha256 of a file
// holding the run's dates, the folder) is masked on both sides; every count is compared as is.

const service = sampleService();

/**
 * The Quick start's commands run in-process, through their own registrations and runAction: what
 * they print on stdout is what is compared (readme-examples.test.ts runs them as written).
 */
const REGISTER = { export: registerExport, verify: registerVerify, ls: registerLs };

/** The commands of the Quick start's first `sh` block, and the `text` block after it. */
async function quickStart(): Promise<{ commands: string[][]; shown: string[] }> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const match = /```sh\n(rabbit-export export --out team\.zip\n[^`]*)```\n\n```text\n([^`]*)```/.exec(readme);
  if (!match) throw new Error('README.md: the Quick start commands and their output were not found');
  const commands = (match[1] ?? '')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').slice(1));
  return { commands, shown: (match[2] ?? '').trimEnd().split('\n') };
}

function masked(line: string): string {
  return line
    .replace(/\b[0-9a-f]{64}\b/g, '<sha256>')
    .replace(/\d+\.\d+/g, '<n>')
    .replace(/\d+ bytes checked/, '<n> bytes checked')
    .replace(/\/\S*\/team\.zip/, '<dir>/team.zip');
}

describe('README.md', () => {
  it('shows what export, verify and ls print on the sample account', async () => {
    const dir = await tempDir();
    const { commands, shown } = await quickStart();
    let printed = '';
    for (const args of commands) {
      const register = REGISTER[args[0] as keyof typeof REGISTER];
      if (register === undefined) throw new Error(`README.md: the Quick start runs ${args[0]}, not registered here`);
      const run = await runCli(args, {
        register,
        cwd: dir,
        env: { RABBIT_API_KEY: service().keys.readOnly, RABBIT_BASE_URL: service().baseUrl, COLUMNS: '80' },
      });
      expect(run.code, args.join(' ')).toBe(0);
      printed += run.stdout;
    }
    const lines = printed.trimEnd().split('\n');
    // `...` ends the shown lines: the rest of the table is left out.
    expect(shown.at(-1)).toBe('...');
    const cut = shown.length - 1;
    expect(shown.slice(0, cut).map(masked)).toEqual(lines.slice(0, cut).map(masked));
  });
});

describe('the environment', () => {
  it('every variable the tool reads is in the README table of them', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(
      readme.indexOf('## Environment'),
      readme.indexOf('\n## ', readme.indexOf('## Environment') + 1),
    );
    const read = new Set<string>();
    for (const file of await sources(join(ROOT, 'src'))) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) read.add(m[1] ?? '');
      for (const m of text.matchAll(/'(RABBIT_[A-Z_]+|[A-Z]+_PROXY)'/g)) read.add(m[1] ?? '');
      for (const m of text.matchAll(/\bread\('([a-z_]+_proxy)'\)/g)) read.add((m[1] ?? '').toUpperCase());
      // Node's os.tmpdir() is TMPDIR: where working files go, which a small /tmp may not hold.
      if (/\btmpdir\(\)/.test(text)) read.add('TMPDIR');
    }
    // Names of the tool's own that only look like variables.
    for (const name of ['RABBIT_']) read.delete(name);
    expect(read.size).toBeGreaterThan(6);
    expect([...read].filter((name) => !table.includes(`\`${name}\``)).sort()).toEqual([]);
  });
});

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    ),
  );
  return files.flat();
}
