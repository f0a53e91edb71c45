import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { registerDiff } from '../../src/cli/commands/diff.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { runCli } from '../helpers/cli.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { requestHold } from '../helpers/sleep-gate.js';
import { tempDir } from '../helpers/temp.js';

// issue 45: what a user meets using the tool every day.

/** Longer than any test: every request goes through the hold's `sleep`, which answers at once. */
const HELD_LATENCY_MS = 600_000;

describe('two exports of the sample account', () => {
  it('diff finds nothing changed, whatever port each sample service listened on', async () => {
    const dir = await tempDir();
    const archives: string[] = [];
    for (const name of ['monday.zip', 'tuesday.zip']) {
      const service = await startFakeService({ seed: 1 });
      try {
        const out = join(dir, name);
        await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
        archives.push(out);
      } finally {
        await service.close();
      }
    }
    const run = await runCli(['diff', ...archives], { register: registerDiff });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 added, 0 removed, 0 changed, 5 unchanged');
  });
});

describe('search', () => {
  it('finds a discussion by its author, through the index the export wrote', async () => {
    const service = await startFakeService({ seed: 1 });
    try {
      const out = join(await tempDir(), 'team.zip');
      await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
      const run = await runCli(['search', out, 'volker', '--json'], { register: registerSearch });
      expect(run.code).toBe(0);
      const records = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records).toContainEqual(
        expect.objectContaining({ type: 'hit', kind: 'discussion', field: 'author', match: 'Volker', id: '1' }),
      );
      expect(records.at(-1)).toMatchObject({ type: 'summary', indexed: 5, scanned: 0 });
    } finally {
      await service.close();
    }
  });
});

describe('progress in a log and on a terminal', () => {
  it('with faults, concurrency changes are summed up beside the progress lines, not told one by one', async () => {
    // Each fault asks for a second's wait (Retry-After): the run and the service share a clock
    // that skips them, so those waits cost nothing and the run is as it would be, only sooner.
    const clock = skippingClock();
    const service = await startFakeService({
      seed: 1,
      faults: { rate: 0.3, kinds: ['503', '429'], seed: 4 },
      now: clock.now,
      timer: clock.timer,
    });
    try {
      const dir = await tempDir();
      const done = await runCli(['export', '--out', join(dir, 'a.zip'), '--stats-interval', '100ms'], {
        register: registerExport,
        clock,
        env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
      });
      // Complete, or with what the faults left unfetched recorded: either way the run ended.
      expect([0, 3]).toContain(done.code);
      expect(service.stats.faultsInjected).toBeGreaterThan(10);
      const lines = done.stderr.split('\n');
      expect(lines.filter((line) => line.startsWith('concurrency now'))).toEqual([]);
      const told = lines.filter((line) => line.startsWith('concurrency '));
      expect(told.length).toBeGreaterThan(0);
      expect(told.length).toBeLessThanOrEqual(lines.filter((line) => line.startsWith('progress: ')).length);
      expect(told.every((line) => / \(\d+ changes?|changed \d+ times/.test(line))).toBe(true);
    } finally {
      await service.close();
    }
  }, 60_000);

  // `script`'s pseudo terminal reports 0 columns: no bar can be drawn there, and a person watching
  // it gets a plain line at least every 5 s instead of nothing until the end. The run's stderr is
  // such a terminal; the run is held in the middle of its crawl while the lines' timer (faked) is
  // moved on 5 s. (progress.test.ts runs the CLI on `script`'s own terminal.)
  it('a terminal of unknown width gets a plain progress line at least every 5 s', async () => {
    const hold = requestHold();
    const service = await startFakeService({ seed: 1, latencyMs: HELD_LATENCY_MS, sleep: hold.sleep });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const dir = await tempDir();
      const held = hold.from(20);
      const running = runCli(['export', '--out', join(dir, 'a.zip')], {
        register: registerExport,
        terminal: { columns: 0 },
        env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
      });
      await held;
      vi.advanceTimersByTime(5_000);
      hold.release();
      const done = await running;
      expect(done.code).toBe(0);
      const progress = done.stderr.split('\n').filter((line) => line.startsWith('progress: '));
      // A line while it crawled, not only those at the end of the crawl and of the run.
      expect(progress.filter((line) => line.startsWith('progress: crawl')).length).toBeGreaterThanOrEqual(1);
      expect(done.stdout).toContain('complete: 5 prototypes');
    } finally {
      vi.useRealTimers();
      await service.close();
    }
  });

  it('verify --against-live on a terminal: how many are checked and the time left, every 5 s', async () => {
    const hold = requestHold();
    const service = await startFakeService({ seed: 1, latencyMs: HELD_LATENCY_MS, sleep: hold.sleep });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const out = join(await tempDir(), 'team.zip');
      await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
      const held = hold.from(20);
      const running = runCli(['verify', out, '--against-live', '--concurrency', '1'], {
        register: registerVerify,
        terminal: { columns: 0 },
        env: { RABBIT_API_KEY: service.keys.readOnly },
      });
      await held;
      vi.advanceTimersByTime(5_000);
      hold.release();
      const done = await running;
      expect(done.code).toBe(0);
      const progress = done.stderr.split('\n').filter((line) => line.startsWith('progress: checked '));
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toMatch(/^progress: checked \d+ of \d+ lists and resources \(\d+%\), \S+ left, \S+ elapsed$/);
      expect(done.stdout).toContain('MATCHES: everything checked is as the archive holds it');
    } finally {
      vi.useRealTimers();
      await service.close();
    }
  });
});
