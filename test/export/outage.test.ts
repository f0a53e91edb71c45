import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService, type OutageOptions } from '../../src/fake-service/index.js';
import { exportAccount, type ExportOptions } from '../../src/export/export-account.js';
import type { ExportEvent } from '../../src/export/events.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { backupAccount } from '../../src/backup/backup-account.js';
import { isRabbitError } from '../../src/core/errors.js';
import { readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { skippingClock, type SkippingClock } from '../helpers/skipping-clock.js';

// issue 27: the whole service gone for a while in the middle of a run (a deploy, a restart) is
// waited out, not recorded as failures. The runs given a skipping clock wait out their outages on
// it (the service goes back on the same clock), the CLI's too, and so does the first contact's limit.

/**
 * The sample's three fixed prototypes without the ordinary ones, and small page images: some eighty
 * requests, so an outage at the 40th falls in the middle of the run, which is all the size these
 * tests need (every run renders the pages anew on a service of its own).
 */
const DATASET = { prototypes: 0, pngWidth: 80, pngHeight: 60 } as const;

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(outage: OutageOptions, clock?: SkippingClock): Promise<FakeService> {
  const service = await startFakeService({
    seed: 5,
    dataset: DATASET,
    outage,
    ...(clock ? { now: clock.now, timer: clock.timer } : {}),
  });
  services.push(service);
  return service;
}

function env(service: FakeService): NodeJS.ProcessEnv {
  return { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
}

/**
 * The archive a run without any outage writes, made and read once for the file from a service of the
 * same seed that never goes away; with the address it was exported from, which its overview pages name.
 */
interface Clean {
  entries: Awaited<ReturnType<typeof readArchive>>;
  baseUrl: string;
}
let clean: Promise<Clean> | undefined;
let cleanDir: string | undefined;
afterAll(async () => {
  if (cleanDir) await rm(cleanDir, { recursive: true, force: true });
});
function cleanArchive(): Promise<Clean> {
  clean ??= (async () => {
    const service = await startFakeService({ seed: 5, dataset: DATASET });
    try {
      cleanDir = await mkdtemp(join(tmpdir(), 'outage-clean-'));
      const out = join(cleanDir, 'clean.zip');
      const result = await exportAccount({ baseUrl: service.baseUrl, keys: [service.keys.readOnly], out });
      expect(result.complete).toBe(true);
      return { entries: await readArchive(out), baseUrl: service.baseUrl };
    } finally {
      await service.close();
    }
  })();
  return clean;
}

/**
 * Every entry but manifest.json (which holds the run's own times and counts) is byte for byte the
 * clean archive's, once that names the address `out` was exported from instead of its own (the
 * two services differ in their port alone); the manifest lists the same files.
 */
async function expectSameArchive(out: string, service: FakeService): Promise<void> {
  const got = await readArchive(out);
  const { entries: want, baseUrl: cleanUrl } = await cleanArchive();
  const names = (entries: Map<string, unknown>): string[] => [...entries.keys()].filter((n) => n !== 'manifest.json');
  expect(names(got.entries).sort()).toEqual(names(want.entries).sort());
  const from = Buffer.from(cleanUrl);
  const asServedHere = (data: Buffer): Buffer =>
    data.includes(from) ? Buffer.from(data.toString('latin1').replaceAll(cleanUrl, service.baseUrl), 'latin1') : data;
  for (const name of names(want.entries)) {
    const wanted = asServedHere(want.entries.get(name)?.data as Buffer);
    expect(got.entries.get(name)?.data.equals(wanted), name).toBe(true);
  }
  expect(got.manifest.errors).toEqual([]);
  expect(got.manifest.complete).toBe(true);
  // When each body was fetched differs between two runs; everything else the manifest says of the prototypes may not.
  const untimed = (value: unknown): string =>
    JSON.stringify(value, (key, v: unknown) => (key === 'fetchedAt' ? undefined : v));
  expect(untimed(got.manifest.prototypes)).toBe(untimed(want.manifest.prototypes));
  const verified = await verifyArchive(out);
  expect(verified.ok).toBe(true);
}

describe('an outage in the middle of a run', () => {
  it('20 s of a service that stopped listening: waited out, the archive exact, nothing recorded as failed', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 20_000, kind: 'down' }, clock);
    const out = join(await tempDir(), 'outage.zip');
    const events: ExportEvent[] = [];
    const options: ExportOptions = {
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      out,
      now: clock.now,
      sleep: clock.sleep,
      onEvent: (event) => events.push(event),
    };
    const result = await exportAccount(options);
    expect(result.complete).toBe(true);
    expect(result.errorCount).toBe(0);
    expect(result.outages).toMatchObject({ count: 1, gaveUp: false });
    // Paused for the whole 20 s on the run's clock, not given up on nor cut short.
    expect(result.outages.totalMs).toBeGreaterThanOrEqual(20_000);
    const outages = events.flatMap((event) => (event.type === 'outage' ? [event] : []));
    expect(outages[0]).toMatchObject({ state: 'started', reason: 'unreachable' });
    expect(outages.filter((event) => event.state === 'probe').length).toBeGreaterThan(0);
    expect(outages.at(-1)).toMatchObject({ state: 'back' });
    expect(events.some((event) => event.type === 'error')).toBe(false);
    await expectSameArchive(out, service);
  }, 60_000);

  it('an outage longer than --outage-patience ends with exit 3 and a written archive; the same command then resumes to exit 0', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 60_000, kind: 'down' }, clock);
    const out = join(await tempDir(), 'patience.zip');
    const args = ['export', '--out', out, '--outage-patience', '1s', '--json'];
    const first = await runCli(args, { register: registerExport, env: env(service), clock });
    expect(first.code).toBe(3);
    const summary = JSON.parse(first.stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
    expect(summary).toMatchObject({ type: 'summary', ok: false, exitCode: 3, complete: false });
    expect(summary['outages']).toMatchObject({ count: 1 });
    const { manifest } = await readArchive(out);
    expect(manifest.complete).toBe(false);
    expect(manifest.errors.length).toBeGreaterThan(0);
    expect(new Set(manifest.errors.map((error) => error.code))).toEqual(new Set(['SERVICE_DOWN']));
    // What the first run fetched stays beside the archive for the next run, which then removes it.
    const work = join(dirname(out), '.patience.zip.rabbit-work');
    expect(existsSync(join(work, 'resumable.json'))).toBe(true);
    // The rest of the minute passes at once: the service is back for the same command.
    clock.skip(60_000);
    await service.back();
    const second = await runCli(args, { register: registerExport, env: env(service), clock });
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(existsSync(work)).toBe(false);
    await expectSameArchive(out, service);
  }, 60_000);

  // On the skipping clock the 20 s Retry-After is 200 ms of the wall, longer than the 100 ms between
  // progress records: a record falls inside the pause, whatever the machine's load.
  it('20 s of 429 to everything with Retry-After as an HTTP date: exit 0, no retries spent, outage records on --json', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 20_000, kind: '429' }, clock);
    const out = join(await tempDir(), 'throttled.zip');
    const run = await runCli(['export', '--out', out, '--json', '--stats-interval', '100ms'], {
      register: registerExport,
      env: env(service),
      clock,
    });
    expect(run.code).toBe(0);
    const records = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const summary = records.at(-1) as Record<string, unknown>;
    expect(summary).toMatchObject({ type: 'summary', exitCode: 0, retries: 0, errors: 0 });
    expect(summary['outages']).toMatchObject({ count: 1 });
    expect((summary['outages'] as { totalSeconds: number }).totalSeconds).toBeGreaterThan(0);
    const outageRecords = records.filter((record) => record['type'] === 'outage');
    expect(outageRecords[0]).toMatchObject({ state: 'started', reason: 'throttled' });
    expect(outageRecords.at(-1)).toMatchObject({ state: 'back' });
    // A progress record made while paused says so.
    expect(records.some((record) => record['type'] === 'progress' && record['outage'] !== null)).toBe(true);
    await expectSameArchive(out, service);
  }, 60_000);
});

describe('--max-duration still wins', () => {
  it('a pause ends at --max-duration: incomplete, DEADLINE for what was left, however patient', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 60_000, kind: 'down' }, clock);
    const out = join(await tempDir(), 'deadline.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      maxDurationMs: 3_000,
      outagePatienceMs: 3_600_000,
      now: clock.now,
      sleep: clock.sleep,
      deadlineTimer: clock.timer,
    });
    expect(result.complete).toBe(false);
    expect(result).toMatchObject({ deadlineReached: true, outages: { count: 1, gaveUp: false } });
    // The deadline ended the pause: the 60 s outage was not waited out.
    expect(result.outages.totalMs).toBeLessThan(60_000);
    const { manifest } = await readArchive(out);
    expect(manifest.errors.length).toBeGreaterThan(0);
    expect(new Set(manifest.errors.map((error) => error.code))).toEqual(new Set(['DEADLINE']));
  });
});

describe('attempts spent because of an outage do not count', () => {
  it('with two attempts per resource, 3 s of refused connections cost no resource', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 3_000, kind: 'down' }, clock);
    const out = join(await tempDir(), 'two-attempts.zip');
    const run = await runCli(['export', '--out', out, '--retries', '2', '--quiet'], {
      register: registerExport,
      env: env(service),
      clock,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    await expectSameArchive(out, service);
  }, 30_000);

  it('--outage-patience 0 is the behaviour before pauses: each resource spends its own attempts and is recorded', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 3_000, kind: 'down' }, clock);
    const out = join(await tempDir(), 'no-patience.zip');
    const run = await runCli(['export', '--out', out, '--retries', '2', '--outage-patience', '0', '--quiet'], {
      register: registerExport,
      env: env(service),
      clock,
    });
    expect(run.code).toBe(3);
    const { manifest } = await readArchive(out);
    expect(manifest.errors.length).toBeGreaterThan(0);
    expect(manifest.errors.every((error) => error.code === 'NETWORK')).toBe(true);
  }, 30_000);

  it('holds for backup, which runs the export core', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 40, forMs: 3_000, kind: 'down' }, clock);
    const dir = await tempDir();
    const result = await backupAccount({
      dir,
      keep: 3,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      retry: { attempts: 2 },
      now: clock.now,
      sleep: clock.sleep,
    });
    expect(result.export.complete).toBe(true);
    expect(result.export.outages).toMatchObject({ count: 1, gaveUp: false });
    await expectSameArchive(result.out, service);
  }, 30_000);
});

describe('one bad resource is not an outage', () => {
  it('even one request at a time: it spends its own attempts and is recorded; the run never pauses', async () => {
    const bad = '/rabbit/api/prototypes/3/pages/page0001.png';
    const service = await startFakeService({
      seed: 5,
      dataset: DATASET,
      faults: { paths: [{ path: bad, kind: '502' }] },
    });
    services.push(service);
    const events: ExportEvent[] = [];
    const result = await exportAccount({
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      out: join(await tempDir(), 'one-bad.zip'),
      concurrency: 1,
      retry: { attempts: 4, baseDelayMs: 20 },
      onEvent: (event) => events.push(event),
    });
    expect(result.errors).toEqual([expect.objectContaining({ source: bad, status: 502, attempts: 4 })]);
    expect(result.errorCount).toBe(1);
    expect(events.some((event) => event.type === 'outage')).toBe(false);
    expect(result.outages.count).toBe(0);
  });
});

describe('a service never reached in this run', () => {
  it('fails fast as before: no pause before the service has answered once', async () => {
    const service = await serve({ atRequest: 1, forMs: 30_000, kind: 'down' });
    const events: ExportEvent[] = [];
    const error = await exportAccount({
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      out: join(await tempDir(), 'never.zip'),
      retry: { attempts: 2, baseDelayMs: 10 },
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    // The first request finds nobody listening: refused at once, as a wrong --base-url would be.
    expect(isRabbitError(error, 'CONNECTION_REFUSED')).toBe(true);
    expect(events.some((event) => event.type === 'outage')).toBe(false);
  });
});

describe('an outage from the very first request', () => {
  /** One run on the skipping clock, with its outage events. */
  async function clockedRun(service: FakeService, clock: SkippingClock, out: string, patienceMs: number) {
    const events: ExportEvent[] = [];
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      outagePatienceMs: patienceMs,
      now: clock.now,
      sleep: clock.sleep,
      onEvent: (event) => events.push(event),
    });
    return { result, outages: events.flatMap((event) => (event.type === 'outage' ? [event] : [])) };
  }

  // A Retry-After on the first answer was slept through unseen, --outage-patience or not.
  it.each(['429', '503'] as const)(
    '%s with Retry-After: a short patience gives up when it runs out, twice, and then a patient run completes',
    async (kind) => {
      const clock = skippingClock();
      const service = await serve({ atRequest: 1, forMs: 7_000, kind }, clock);
      const out = join(await tempDir(), `first-${kind}.zip`);
      for (const attempt of ['first run', 'resumed while the outage is still on']) {
        const asked = clock.slept.length;
        const { result, outages } = await clockedRun(service, clock, out, 1_000);
        expect(result, attempt).toMatchObject({ complete: false, outages: { count: 1, gaveUp: true } });
        // One probe, as patience runs out, still asked to wait: no second one.
        expect(
          outages.map((event) => event.state),
          attempt,
        ).toEqual(['started', 'gave-up']);
        expect(outages[0]).toMatchObject({ reason: 'throttled' });
        // The run's clock shows a pause bounded by the patience, not the 7 s the service asked for.
        const waits = clock.slept.slice(asked);
        expect(waits.length, attempt).toBeGreaterThan(0);
        expect(Math.max(...waits), attempt).toBeLessThanOrEqual(1_000);
        const { manifest } = await readArchive(out);
        expect(manifest.errors.map((error) => error.code)).toEqual(['SERVICE_DOWN']);
      }
      // Patient enough for what is left of the 7 s: paused, and then the whole archive.
      const { result, outages } = await clockedRun(service, clock, out, 60_000);
      expect(result).toMatchObject({ complete: true, errorCount: 0, outages: { count: 1, gaveUp: false } });
      expect(result.stats.retries).toBe(0);
      expect(outages.map((event) => event.state)).toEqual(['started', 'back']);
      expect(outages[0]).toMatchObject({ reason: 'throttled' });
      await expectSameArchive(out, service);
    },
  );
  // The first-contact limit runs on the run's timer: the 2 s pause (Retry-After: 2), skipped on the
  // clock, moves it past its 1 s, and it must let the pause be.
  it('a pause that starts at the first request outlasts the first contact limit: the patience bounds it', async () => {
    const clock = skippingClock();
    const service = await serve({ atRequest: 1, forMs: 2_000, kind: '503' }, clock);
    const out = join(await tempDir(), 'long-first.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      firstContactMs: 1_000,
      outagePatienceMs: 60_000,
      now: clock.now,
      sleep: clock.sleep,
      timer: clock.timer,
    });
    expect(result.complete).toBe(true);
    expect(result.outages).toMatchObject({ count: 1, gaveUp: false });
    // The pause outlasted the limit on the run's clock.
    expect(result.outages.totalMs).toBeGreaterThan(1_000);
    await expectSameArchive(out, service);
  }, 30_000);
});
