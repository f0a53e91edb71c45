import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { KEPT_PROBLEMS, verifyArchive } from '../../src/verify/verify-archive.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { exportPrototype } from '../restore/restore-helpers.js';

/**
 * A zip of many tiny entries its manifest does not list, written by Python's zipfile beside the
 * manifest of a real export: each one is a problem for verify. A million of them once held a
 * million problems in memory (over 500 MB) and overflowed the stack when printed; the report now
 * keeps the first KEPT_PROBLEMS and counts the rest. Here a few more than that show the cut.
 */
const CRAFT = `
import sys, zipfile
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
manifest = zipfile.ZipFile(src).read('manifest.json')
with zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED) as z:
    z.writestr('manifest.json', manifest)
    for i in range(n):
        z.writestr('prototypes/1001/r1/x/%07d.json' % i, b'{}')
`;
/** Half as many again as a report lists. */
const EXTRA = 1500;

let dir: string;
let crafted: string;

beforeAll(async () => {
  requireTool('python3');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-many-problems-'));
  const service = await startFakeService({ seed: 1 });
  let good: string;
  try {
    good = await exportPrototype(service, dir, 'good.zip');
  } finally {
    await service.close();
  }
  crafted = join(dir, 'crafted.zip');
  execFileSync(python(), ['-c', CRAFT, good, crafted, String(EXTRA)], { stdio: 'pipe' });
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('verify of an archive with more problems than a report lists', () => {
  it('lists the first KEPT_PROBLEMS and counts every one', async () => {
    const report = await verifyArchive(crafted);
    expect(report.ok).toBe(false);
    expect(report.problems).toHaveLength(KEPT_PROBLEMS);
    // Every entry of the manifest's own prototype is missing from the crafted zip too: more than EXTRA in all.
    expect(report.problemCount).toBeGreaterThanOrEqual(EXTRA);
    expect(report.problems.filter((problem) => problem.kind === 'unlisted')).toHaveLength(KEPT_PROBLEMS);
  });

  it('says how many more there are, and the total in its verdict', async () => {
    const report = await verifyArchive(crafted);
    const run = await runCli(['verify', crafted], { register: registerVerify });
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(KEPT_PROBLEMS + 3);
    expect(lines.at(-3)).toBe(`  … and ${report.problemCount - KEPT_PROBLEMS} more problems, not listed`);
    expect(lines.at(-2)).toMatch(new RegExp(`^FAILED: crafted\\.zip has ${report.problemCount} problems \\(`));
    expect(lines.at(-1)).toMatch(/^next: if crafted\.zip is a copy, copy it again/);
  });
});
