import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WORKFLOW = fileURLToPath(new URL('../../.github/workflows/release.yml', import.meta.url));

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  needs?: string | string[];
  strategy?: { matrix: { include: Array<{ target: string; runner: string }> } };
  steps: Step[];
}

/** The workflow as PyYAML reads it (python3-yaml), not as we would. */
async function workflow(): Promise<{ jobs: Record<string, Job> }> {
  const toJson = 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin), default=str))';
  const run = spawnSync('/usr/bin/python3', ['-c', toJson], { input: await readFile(WORKFLOW), encoding: 'utf8' });
  if (run.error) throw run.error;
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as { jobs: Record<string, Job> };
}

describe('.github/workflows/release.yml', () => {
  it('builds linux-x64, linux-arm64, macos-arm64 and windows-x64 on runners of those platforms', async () => {
    const { jobs } = await workflow();
    const job = jobs['package'] as Job;
    expect(job['runs-on']).toBe('${{ matrix.runner }}');
    const runners = Object.fromEntries(job.strategy!.matrix.include.map((entry) => [entry.target, entry.runner]));
    expect(Object.keys(runners).sort()).toEqual(['linux-arm64', 'linux-x64', 'macos-arm64', 'windows-x64']);
    // A single executable is the node that builds it: each target needs its own kind of runner.
    expect(runners['linux-x64']).toMatch(/^ubuntu-[\d.]+$|^ubuntu-latest$/);
    expect(runners['linux-arm64']).toMatch(/^ubuntu-.*-arm$/);
    expect(runners['macos-arm64']).toMatch(/^macos-(1[4-9]|latest)/);
    expect(runners['windows-x64']).toMatch(/^windows-(\d+|latest)$/);
  });

  it('calls the same npm run package a developer runs, on Node 20', async () => {
    const { jobs } = await workflow();
    const steps = (jobs['package'] as Job).steps;
    const runs = steps.flatMap((step) => (step.run === undefined ? [] : [step.run.trim()]));
    expect(runs).toContain('npm ci --no-audit --no-fund');
    expect(runs).toContain('npm run package');
    expect(runs.indexOf('npm ci --no-audit --no-fund')).toBeLessThan(runs.indexOf('npm run package'));
    const setupNode = steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
    expect(setupNode?.with?.['node-version']).toMatch(/^20(\.|$)/);
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts['package']).toBe('node scripts/package.mjs');
  });

  it('gathers every executable and checks SHA256SUMS over them', async () => {
    const { jobs } = await workflow();
    const release = jobs['release'] as Job;
    expect(release.needs).toBe('package');
    const script = release.steps.map((step) => step.run ?? '').join('\n');
    expect(script).toContain('cat rabbit-export-*.sha256 > SHA256SUMS');
    expect(script).toContain('sha256sum --check --strict SHA256SUMS');
  });

  it('pins every action to a commit, and caches nothing a release is built from', async () => {
    const { jobs } = await workflow();
    const steps = Object.values(jobs).flatMap((job) => job.steps);
    const actions = steps.flatMap((step) => (step.uses === undefined ? [] : [step.uses]));
    expect(actions.length).toBeGreaterThan(0);
    // A tag can be moved to other code by whoever holds the action's repository; a commit cannot.
    for (const action of actions) expect(action).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
    // The tag each commit stands for, as a comment on its line, so that a reader and an updater see it.
    const text = await readFile(WORKFLOW, 'utf8');
    for (const line of text.split('\n').filter((l) => /^\s*(- )?uses:/.test(l)))
      expect(line).toMatch(/@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
    // A cache is shared with every run of the repository (pull requests' too): none reaches the executables.
    for (const step of steps) expect(step.with?.['cache'], step.uses).toBeUndefined();
    expect(text).not.toMatch(/actions\/cache@/);
  });
});
