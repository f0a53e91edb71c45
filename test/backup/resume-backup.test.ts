import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { runCli, startCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { requestHold, type RequestHold } from '../helpers/sleep-gate.js';

// issue 29: a backup interrupted mid-night is resumed by the next run, as export resumes, and says so.

let service: FakeService;
let dir: string;
let hold: RequestHold;
// Every request goes through the hold: answered at once, unless the test has it stop the run.
useFakeService({ latencyMs: 600_000, sleep: (ms) => hold.sleep(ms) }, (fixture) => {
  ({ service, dir } = fixture);
  hold = requestHold();
});

const env = (): Record<string, string> => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

describe('backup after an interrupted night', () => {
  it('SIGINT keeps the work and says a backup was interrupted; the next run resumes it, fetching little more', async () => {
    // A full export of this account: every request once. Only the interrupted night needs a process
    // of its own, for the signal; the nights before and after it run in this one.
    const full = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env() });
    expect(full.code).toBe(0);
    const fullRequests = (JSON.parse(full.stdout) as { requests: number }).requests;
    const first = (await readdir(dir)).filter((name) => name.endsWith('.zip'));
    service.stats.reset();
    // Make every prototype new, so that nothing can be copied from the first archive (--since).
    for (const id of service.store.prototypeIds()) service.store.touch(Number(id));

    // The 80th answer is held, the others come at once: the night is in its middle when the
    // signal comes.
    const held = hold.one(80);
    const { child, done } = startCli(['backup', '--dir', dir, '--concurrency', '2'], { env: env() });
    await held;
    child.kill('SIGINT');
    const stopped = await done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(/the backup was interrupted; .* the next backup into .* resumes from it/);
    expect(stopped.stderr).not.toMatch(/the export was interrupted/);
    const work = (await readdir(dir)).filter((name) => name.endsWith('.rabbit-work'));
    expect(work).toHaveLength(1);
    // The interrupted night wrote no archive.
    expect((await readdir(dir)).filter((name) => name.endsWith('.zip'))).toEqual(first);
    const fetchedBefore = service.stats.requests;

    hold.release();
    service.stats.reset();
    const again = await runCli(['backup', '--dir', dir, '--json'], { register: registerBackup, env: env() });
    expect(again.code, again.stderr).toBe(0);
    const interrupted = (work[0] as string).replace(/^\./, '').replace(/\.rabbit-work$/, '');
    const stamp = /^(\d{4}-\d{2}-\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(interrupted) as RegExpExecArray;
    expect(again.stderr).toContain(
      `resuming the interrupted backup of ${stamp[1]} ${stamp[2]}:${stamp[3]}:${stamp[4]} UTC (${interrupted})`,
    );
    const summary = JSON.parse(again.stdout) as { resumed: string; resumedFiles: number; complete: boolean };
    expect(summary.resumed).toBe(interrupted);
    expect(summary.resumedFiles).toBeGreaterThan(20);
    // What the interrupted night saved is not fetched again: the two runs together cost about one.
    expect(service.stats.requests).toBeLessThanOrEqual(fullRequests - summary.resumedFiles + 20);
    expect(service.stats.requests + fetchedBefore).toBeLessThanOrEqual(fullRequests + 40);
    expect((await readdir(dir)).filter((name) => name.endsWith('.rabbit-work'))).toEqual([]);
  });
});
