import { spawnSync } from 'node:child_process';
import { chmod, readFile, readdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TOOL_PACKAGES } from '../helpers/tools.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PREFLIGHT = join(ROOT, 'scripts/preflight.mjs');

interface Entry {
  tool: string;
  package: string;
}

const list = async (): Promise<Entry[]> =>
  (JSON.parse(await readFile(join(ROOT, 'scripts/system-tools.json'), 'utf8')) as { tools: Entry[] }).tools;

const unique = (names: string[]): string[] => [...new Set(names)];

function preflight(args: string[], PATH: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [PREFLIGHT, ...args], { encoding: 'utf8', env: { PATH } });
  if (run.error) throw run.error;
  return run;
}

describe('npm test checks the programs it runs before anything else (scripts/preflight.mjs)', () => {
  it('with nothing on PATH, names every missing tool and prints one apt-get line for all their packages', async () => {
    const empty = await tempDir();
    // What is looked up on PATH (and the font, which needs fc-list from PATH) is missing; absolute paths are not.
    const missing = (await list()).filter((entry) => !isAbsolute(entry.tool) && !entry.tool.startsWith('python3:'));
    expect(missing.length).toBeGreaterThan(5);
    const run = preflight([], empty);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const entry of missing) expect(lines[0]).toContain(`${entry.tool} (${entry.package})`);
    expect(lines[1]).toBe(`apt-get install -y ${unique(missing.map((entry) => entry.package)).join(' ')}`);
  });

  it('passes silently on this machine, where everything on the list is installed', () => {
    const run = preflight([], process.env['PATH'] ?? '');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('--install (.ci/run) hands apt-get exactly the missing packages, then checks again', async () => {
    const dir = await tempDir();
    const log = join(dir, 'apt-get.log');
    // An apt-get that only writes down what it was asked; the tools stay missing, so the check fails after it.
    await writeFile(join(dir, 'apt-get'), `#!/bin/sh\necho "$*" >> '${log}'\n`);
    await chmod(join(dir, 'apt-get'), 0o755);
    const run = preflight(['--install'], dir);
    const missing = (await list()).filter((entry) => !isAbsolute(entry.tool) && !entry.tool.startsWith('python3:'));
    const packages = unique(missing.map((entry) => entry.package)).join(' ');
    expect(await readFile(log, 'utf8')).toBe(`update -qq\ninstall -y -qq ${packages}\n`);
    expect(run.status).toBe(1);
    expect(run.stderr.trimEnd().split('\n').at(-1)).toBe(`apt-get install -y ${packages}`);
  });

  it('is the one list: .ci/run installs through it, and every tool a test names is on it with the same package', async () => {
    const ci = await readFile(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toContain('node scripts/preflight.mjs --install\n');
    expect(ci).not.toMatch(/apt-get|command -v/);
    const entries = await list();
    const packageOf = new Map(entries.map((entry) => [entry.tool, entry.package]));
    for (const [tool, debian] of Object.entries(TOOL_PACKAGES)) expect(packageOf.get(tool), tool).toBe(debian);
    // requireTool('/usr/bin/qpdf', 'qpdf') and the like, in every test file.
    const named: Array<[string, string]> = [];
    for (const file of await readdir(join(ROOT, 'test'), { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      const text = await readFile(join(ROOT, 'test', file), 'utf8');
      for (const match of text.matchAll(/requireTool\('([^']+)', '([^']+)'\)/g)) named.push([match[1]!, match[2]!]);
    }
    expect(named.length).toBeGreaterThan(5);
    for (const [tool, debian] of named) expect(packageOf.get(tool), tool).toBe(debian);
  });

  it('the README quick start gives the same apt-get line, before npm test', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const quickStart = readme.slice(
      readme.indexOf('## Quick start'),
      readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
    );
    const line = `apt-get install -y ${unique((await list()).map((entry) => entry.package)).join(' ')}`;
    expect(quickStart).toContain(line);
    expect(quickStart.indexOf(line)).toBeLessThan(quickStart.indexOf('\nnpm test\n'));
  });
});
