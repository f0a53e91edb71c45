import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { datasetForResources, type FakeService } from '../../src/fake-service/index.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import type { DeadlineTimer } from '../../src/export/deadline.js';
import type { Manifest } from '../../src/manifest/types.js';
import { useFakeService } from '../helpers/fake-service.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { manifestByPython } from './python-zip.js';

// issue 37, point 4: a run stopped by --max-duration said "13 resources could not be archived"
// when 631 requests had not started. Its summary now says how many prototypes are complete and
// what is left, in words and in --json.

/** The run's --max-duration expires when the test says, not by the clock: its timer is the test's. */
const clock: { expire?: () => void } = {};
const deadlineTimer: DeadlineTimer = (_ms, expire) => {
  clock.expire = expire;
  return () => undefined;
};

let service: FakeService;
let dir: string;
const BIG = '1001';
let trickling = '';

useFakeService({ seed: 37, dataset: datasetForResources(900, { prototypes: 1 }) }, (fixture) => {
  ({ service, dir } = fixture);
  // A page image of the big prototype never ends: the run waits on it until the deadline.
  const page = service.store.pageIds(BIG)?.at(-1);
  if (page === undefined) throw new Error('the big prototype has no pages');
  trickling = `/rabbit/api/prototypes/${BIG}/pages/${page}.png`;
  service.setFaults({ paths: [{ path: trickling, kind: 'trickle' }] });
});

/** Expires the --max-duration of the run under way (its timer is the test's). */
function expireNow(): void {
  if (clock.expire === undefined) throw new Error('the run set no --max-duration timer');
  clock.expire();
}

/**
 * Runs the export one request at a time and stops it once it waits on the trickling image: with
 * the smallest prototypes first, the small ones are done by then.
 */
async function runStopped(out: string, extra: string[]): Promise<CliRun> {
  const args = ['export', '--out', out, '--concurrency', '1', '--max-duration', '1h', '--speed-limit', '0', ...extra];
  return stopped(args, registerExport);
}

async function stopped(args: string[], register: typeof registerExport): Promise<CliRun> {
  delete clock.expire;
  const before = service.stats.byPath.get(trickling) ?? 0;
  const run = runCli(args, {
    register,
    env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    clock: { deadlineTimer },
  });
  await until(() => (service.stats.byPath.get(trickling) ?? 0) > before, {
    what: 'the run waiting on the trickling image',
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  expireNow();
  return run;
}

/** What the manifest says was left: requests never started (per prototype) and requests cut off. */
function leftIn(manifest: Manifest): { notStarted: number; prototypes: number; cutOff: number } {
  let notStarted = 0;
  let prototypes = 0;
  let cutOff = 0;
  for (const error of manifest.errors) {
    expect(error.code, error.source).toBe('DEADLINE');
    const tasks = /^(\d+) requests? of prototype \d+ did not start/.exec(error.message)?.[1];
    if (tasks !== undefined) {
      notStarted += Number(tasks);
      prototypes++;
    } else cutOff++;
  }
  return { notStarted, prototypes, cutOff };
}

describe('the summary of a run stopped at --max-duration', () => {
  it('says how many prototypes are complete and how many requests were not started, with the command that goes on', async () => {
    const out = join(dir, 'night.zip');
    const run = await runStopped(out, []);
    expect(run.code).toBe(3);
    const manifest = await manifestByPython(out);
    const left = leftIn(manifest);
    expect(left.prototypes).toBe(1);
    expect(left.notStarted).toBeGreaterThan(10);
    expect(run.stderr).toContain('stopped fetching at --max-duration');
    expect(run.stderr).toContain(
      `3 of 4 prototypes complete; ${left.notStarted} requests not started (1 prototype); ` +
        `${left.cutOff} request${left.cutOff === 1 ? '' : 's'} cut off, run the same command with --since to go on:\n` +
        `  rabbit-export export --out ${out} --concurrency 1 --since ${out} --speed-limit 0 --max-duration 1h --force\n`,
    );
    // Work not started is not a resource that could not be archived.
    expect(run.stderr).not.toContain('could not be archived');
  });

  it('of a backup says it stopped, and counts no work left undone as resources that could not be archived', async () => {
    const folder = join(dir, 'nightly');
    const args = ['backup', '--dir', folder, '--concurrency', '1', '--max-duration', '1h', '--speed-limit', '0'];
    const run = await stopped(args, registerBackup);
    expect(run.code).toBe(3);
    expect(run.stdout + run.stderr).toContain('stopped fetching at --max-duration');
    expect(run.stdout + run.stderr).not.toContain('could not be archived');
  });

  it('--json carries the same figures', async () => {
    const out = join(dir, 'night.zip');
    const run = await runStopped(out, ['--json']);
    expect(run.code).toBe(3);
    const left = leftIn(await manifestByPython(out));
    expect(JSON.parse(run.stdout)).toMatchObject({
      deadlineReached: true,
      complete: false,
      prototypesListed: 4,
      prototypesComplete: 3,
      requestsNotStarted: left.notStarted,
      prototypesLeft: 1,
      requestsCutOff: left.cutOff,
      errors: left.prototypes + left.cutOff,
    });
  });
});
