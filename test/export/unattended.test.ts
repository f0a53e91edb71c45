import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService, type FakeServiceOptions } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { isRabbitError } from '../../src/core/errors.js';
import { manifestOf, readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { SMALL_SAMPLE } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';
import { expectExact } from '../helpers/exact.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { whenever } from '../helpers/until.js';

// issue 14: an unattended run always ends. Bodies that trickle a byte at a time are never idle,
// so only a minimum rate or a deadline ends them.

/**
 * The services serve small accounts (small page images, and every run of a test asks for its whole
 * account): the sample's three fixed prototypes (83 requests), which hold every kind of resource
 * the stalls here need; where a deadline test names the ordinary prototypes 1001 and 1002, the
 * five, the ordinary two cut to a page, a layer and a discussion each (111 requests, not 197).
 */
const DATASET = { prototypes: 0, pngWidth: 80, pngHeight: 60 } as const;

function serve(options: FakeServiceOptions = {}): Promise<FakeService> {
  return startFakeService({ dataset: DATASET, ...options });
}

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

const TRICKLING = '/rabbit/api/prototypes/3/pages/page0001.png';

function env(svc: FakeService): NodeJS.ProcessEnv {
  return { RABBIT_API_KEY: svc.keys.readOnly, RABBIT_BASE_URL: svc.baseUrl };
}

describe('stalled transfers end', () => {
  it('a body that trickles for ever is aborted, retried, recorded as STALLED (exit 3), and everything else is exact', async () => {
    // The service trickles on the run's clock, a byte every 8 s of it, and the watchdog judges on the
    // same clock: a window of 32 s (--speed-time) passes as the trickle's waits are skipped, in a
    // third of a second of the wall, and so does the backoff between the two attempts. On the wall
    // the two windows would outlast the test; a window much shorter on the clock would be a few
    // milliseconds of the wall, in which a busy machine may hold up an honest body too.
    const clock = skippingClock();
    service = await serve({
      faults: { paths: [{ path: TRICKLING, kind: 'trickle' }], trickleMs: 8_000 },
      now: clock.now,
      sleep: (ms) => clock.sleep(ms),
    });
    const out = join(await tempDir(), 'trickle.zip');
    const run = await runCli(['export', '--out', out, '--speed-time', '32', '--retries', '2', '--quiet'], {
      register: registerExport,
      env: env(service),
      clock,
    });
    expect(run.code).toBe(3);
    const { manifest } = await readArchive(out);
    expect(manifest.errors).toEqual([expect.objectContaining({ source: TRICKLING, code: 'STALLED', attempts: 2 })]);
    expect(manifest.errors[0]?.message).toContain('for 32 s');
    expect(manifest.prototypes['3']?.complete).toBe(false);
    expect(Object.entries(manifest.prototypes).filter(([id, record]) => id !== '3' && !record.complete)).toEqual([]);
    expect(service.stats.faultsInjected).toBe(2);
    await expectExact(out, service, [TRICKLING]);
  });

  it('holds for page assets too: a trickling stylesheet is recorded as STALLED', async () => {
    const css = '/rabbit/static/css/page.css';
    service = await serve({ faults: { paths: [{ path: css, kind: 'trickle' }], trickleMs: 500 } });
    const out = join(await tempDir(), 'assets.zip');
    // The flags' way to the watchdog is the test above's; here a window of 200 ms (the flag's
    // least is 1 s), under which a byte every 500 ms is a stall.
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      stall: { minBytesPerSecond: 1024, windowMs: 200 },
      retry: { attempts: 1 },
    });
    expect(result.complete).toBe(false);
    const { manifest } = await readArchive(out);
    expect(manifest.errors).toEqual([expect.objectContaining({ source: css, code: 'STALLED' })]);
  });

  it('Ctrl-C stops a run waiting on a trickling body at once, leaving nothing at --out', async () => {
    service = await serve({ faults: { paths: [{ path: TRICKLING, kind: 'trickle' }] } });
    const out = join(await tempDir(), 'interrupted.zip');
    const controller = new AbortController();
    let aborted = false;
    const running = exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      signal: controller.signal,
      // With the minimum rate off, the trickle (which never ends) can only be ended by the abort:
      // were the abort to wait for the body, the run would never end and the test would time out.
      stall: { minBytesPerSecond: 0 },
      onEvent: (event) => {
        // Once the trickle has started and nothing else is waiting, interrupt.
        if (event.type === 'response' && service!.stats.faultsInjected > 0 && event.queued === 0 && !aborted) {
          aborted = true;
          setTimeout(() => controller.abort(new Error('SIGINT')), 200);
        }
      },
    });
    const error: unknown = await running.catch((e: unknown) => e);
    expect(isRabbitError(error, 'INTERRUPTED')).toBe(true);
    expect(aborted).toBe(true);
    expect(existsSync(out)).toBe(false);
  });
});

describe('--max-duration', () => {
  it('stops fetching, writes a whole archive of what it has (complete prototypes stay complete), marked incomplete; --since then completes it', async () => {
    const slow = ['/rabbit/api/prototypes/3/pages/page0001.png', '/rabbit/api/prototypes/3/layers.json'];
    service = await serve({
      dataset: SMALL_SAMPLE,
      faults: { paths: slow.map((path) => ({ path, kind: 'trickle' as const })) },
    });
    const dir = await tempDir();
    const first = join(dir, 'night1.zip');
    // The deadline expires once every prototype but 3 is done, as a few seconds' deadline would on
    // a quiet machine, without waiting those seconds (or too few of them on a busy one).
    const undone = new Set(['17', '42', '1001', '1002']);
    let expire = (): void => undefined;
    const result = await exportAccount({
      out: first,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      maxDurationMs: 4_000,
      deadlineTimer: (_ms, fire) => {
        expire = fire;
        return () => undefined;
      },
      onEvent: (event) => {
        if (event.type === 'prototype-done' && undone.delete(event.id) && undone.size === 0) setImmediate(expire);
      },
    });
    expect(result).toMatchObject({ complete: false, deadlineReached: true });

    const report = await verifyArchive(first);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    const manifest = await manifestOf(first);
    expect(report.manifest?.complete).toBe(false);
    expect(manifest.complete).toBe(false);
    expect(manifest.prototypes['3']?.complete).toBe(false);
    const others = Object.entries(manifest.prototypes).filter(([id]) => id !== '3');
    expect(others.length).toBeGreaterThan(0);
    for (const [id, record] of others) expect(record.complete, id).toBe(true);
    expect(manifest.errors.length).toBeGreaterThan(0);
    for (const error of manifest.errors) {
      expect(error.code).toBe('DEADLINE');
      // Prototype 3's own resources, or page assets the deadline left unfetched (they belong to
      // no prototype; the viewer pages that use them are the only thing missing them).
      const apiSource = error.source.startsWith('/rabbit/api/');
      expect(!apiSource || error.source.startsWith('/rabbit/api/prototypes/3'), error.source).toBe(true);
    }
    expect(manifest.errors.map((e) => e.source)).toEqual(expect.arrayContaining(slow));

    // The next run against a healthy service fetches what is missing and copies the rest.
    service.setFaults(undefined);
    const second = join(dir, 'night2.zip');
    const next = await runCli(['export', '--out', second, '--since', first, '--quiet'], {
      register: registerExport,
      env: env(service),
    });
    expect(next.code).toBe(0);
    const { manifest: completed } = await readArchive(second);
    expect(completed.complete).toBe(true);
    for (const [id] of others) expect(completed.prototypes[id]?.origin?.mode, id).toBe('reused');
    await expectExact(second, service);
  });

  it('records the prototypes whose work never started: with one request at a time, the rest wait behind a trickle', async () => {
    // The frontier takes the newest task first, so prototype 1002 (listed last) goes early and its
    // pages.json holds the only slot until the deadline; prototypes still queued were never read.
    service = await serve({
      dataset: SMALL_SAMPLE,
      faults: { paths: [{ path: '/rabbit/api/prototypes/1002/pages.json', kind: 'trickle' }] },
    });
    const dir = await tempDir();
    const out = join(dir, 'queued.zip');
    // With one request at a time, nothing moves once the trickle has started: the deadline then
    // expires, as its 3 s would.
    const run = await runCli(['export', '--out', out, '--max-duration', '3s', '--concurrency', '1', '--json'], {
      register: registerExport,
      env: env(service),
      clock: { deadlineTimer: (_ms, expire) => whenever(() => service!.stats.faultsInjected > 0, expire) },
    });
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ exitCode: 3, complete: false, deadlineReached: true });
    const report = await verifyArchive(out);
    expect(report.ok).toBe(true);
    const errors = report.manifest?.errors ?? [];
    expect(errors.every((e) => e.code === 'DEADLINE')).toBe(true);
    const sources = new Set(errors.map((e) => e.source));
    expect(sources.has('/rabbit/api/prototypes/1002/pages.json')).toBe(true);
    // Nothing is lost without a word: every listed prototype is in the archive or named as not read.
    const whole = await manifestOf(out);
    const read = Object.keys(whole.prototypes);
    const notRead = ['3', '17', '42', '1001', '1002'].filter((id) => !read.includes(id));
    expect(notRead.length).toBeGreaterThan(0);
    for (const id of notRead) expect(sources.has(`/rabbit/api/prototypes/${id}.json`), id).toBe(true);
    expect(whole.prototypes['1002']?.complete).toBe(false);

    service.setFaults(undefined);
    const next = await runCli(['export', '--out', join(dir, 'full.zip'), '--since', out, '--quiet'], {
      register: registerExport,
      env: env(service),
    });
    expect(next.code).toBe(0);
    await expectExact(join(dir, 'full.zip'), service);
  });

  it('when every body trickles, the run still ends soon after the deadline with exit 3 and a verifiable, incomplete archive', async () => {
    service = await serve({ faults: { rate: 1, kinds: ['trickle'] } });
    const dir = await tempDir();
    const out = join(dir, 'cut.zip');
    // With the minimum rate off, only the deadline can end these bodies, which never end by
    // themselves: a deadline that waited for requests in flight would never end the run.
    // The list itself trickles: once it has started, nothing else can, and the deadline expires.
    const run = await runCli(['export', '--out', out, '--max-duration', '2s', '--speed-limit', '0', '--quiet'], {
      register: registerExport,
      env: env(service),
      clock: { deadlineTimer: (_ms, expire) => whenever(() => service!.stats.faultsInjected > 0, expire) },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('--max-duration');
    // Cut off before any prototype was known: nothing to count but the list itself.
    expect(run.stderr).toContain('the list of prototypes was not read; 1 request cut off');
    expect(run.stderr).not.toContain('could not be archived');
    const report = await verifyArchive(out);
    expect(report.ok).toBe(true);
    expect(report.manifest?.complete).toBe(false);
    expect(report.manifest?.errors).toEqual([
      expect.objectContaining({ source: '/rabbit/api/prototypes.json', code: 'DEADLINE' }),
    ]);

    service.setFaults(undefined);
    const next = await runCli(['export', '--out', join(dir, 'full.zip'), '--since', out, '--quiet'], {
      register: registerExport,
      env: env(service),
    });
    expect(next.code).toBe(0);
    await expectExact(join(dir, 'full.zip'), service);
  });

  it('a bad duration is a usage error', async () => {
    service = await serve();
    const run = await runCli(['export', '--out', join(await tempDir(), 'x.zip'), '--max-duration', 'soon'], {
      register: registerExport,
      env: env(service),
    });
    expect(run.code).toBe(2);
    expect(service.stats.requests).toBe(0);
  });
});

describe('export --since by hand', () => {
  it('takes an archive of the same service however its URL is spelled, and refuses another service (exit 2)', async () => {
    service = await serve();
    const dir = await tempDir();
    const prev = join(dir, 'prev.zip');
    expect(
      (await runCli(['export', '--out', prev, '--quiet'], { register: registerExport, env: env(service) })).code,
    ).toBe(0);
    const spelled = service.baseUrl.replace('http://', 'HTTP://') + '/';
    const same = await runCli(
      ['export', '--out', join(dir, 'same.zip'), '--since', prev, '--base-url', spelled, '--quiet'],
      { register: registerExport, env: env(service) },
    );
    expect(same.code).toBe(0);
    const other = await runCli(
      [
        'export',
        '--out',
        join(dir, 'other.zip'),
        '--since',
        prev,
        '--base-url',
        service.baseUrl.replace('127.0.0.1', 'localhost'),
        '--quiet',
      ],
      { register: registerExport, env: env(service) },
    );
    expect(other.code).toBe(2);
  });
});
