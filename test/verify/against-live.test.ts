import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService, type FakeServiceOptions } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { checkAgainstLive, type LiveCheckOptions } from '../../src/live-check/check-live.js';
import { liveVerdict, type Difference, type LiveCheckReport } from '../../src/live-check/live-report.js';
import { openArchive } from '../../src/archive/open-archive.js';
import { readCheckPlan } from '../../src/live-check/archive-plan.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { whenever } from '../helpers/until.js';

// issue 38: verify --against-live tells whether an archive still holds what the service serves.

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(options: FakeServiceOptions = {}): Promise<FakeService> {
  const service = await startFakeService({ seed: 5, ...options });
  services.push(service);
  return service;
}

async function exported(service: FakeService): Promise<string> {
  const out = join(await tempDir(), 'team.zip');
  const result = await exportAccount({ baseUrl: service.baseUrl, keys: [service.keys.readOnly], out });
  expect(result.complete).toBe(true);
  return out;
}

function check(
  service: FakeService,
  archive: string,
  options: Partial<LiveCheckOptions> = {},
): Promise<LiveCheckReport> {
  return checkAgainstLive({ archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly], seed: 7, ...options });
}

/** A difference as the test names it: status, kind, prototype, id (and the parent or format when there is one). */
const named = (d: Difference): string =>
  [d.status, d.kind, d.prototype ?? '-', d.id, d.parent ?? d.format ?? ''].join(' ').trim();

/** The same four edits each test makes: an element, a page's name, a new discussion, a prototype deleted. */
function edit(service: FakeService): {
  prototype: string;
  page: string;
  renamed: string;
  element: string;
  discussion: number;
} {
  const store = service.store;
  const prototype = '1001';
  const proto = store.prototype(prototype);
  const [first, second] = proto?.pages ?? [];
  const element = first?.elements[0]?.id;
  if (!first || !second || !element) throw new Error('the sample prototype has no two pages with elements');
  store.updateElement(prototype, first.id, element, {
    position: { x: 3, y: 4 },
    dimensions: { width: 40, height: 30 },
  });
  store.renamePage(prototype, second.id, 'Renamed page');
  const discussion = store.addDiscussion(prototype, second.id, 'A new thread', 'Ada');
  store.deletePrototype('1002');
  return { prototype, page: first.id, renamed: second.id, element, discussion };
}

/** The differences the four edits of `edit` make, as `named` writes them. */
function expected(e: ReturnType<typeof edit>): string[] {
  const { prototype, page, renamed, element, discussion } = e;
  return [
    'gone prototype 1002 1002',
    `changed prototype ${prototype} ${prototype}`,
    `changed element ${prototype} ${element} ${page}`,
    `changed rendering ${prototype} ${page} html`,
    `changed rendering ${prototype} ${page} png`,
    `changed page ${prototype} ${renamed}`,
    `changed rendering ${prototype} ${renamed} html`,
    `new discussion ${prototype} ${discussion}`,
  ].sort();
}

/** A clock that only moves when something waits on it: a wait of 90 s takes no time at all. */
function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let time = Date.parse('2026-01-05T03:00:00Z');
  return {
    now: () => time,
    sleep: async (ms) => {
      time += ms;
      await Promise.resolve();
    },
  };
}

/** The paths a plan samples, and the strata (prototype and kind) they come from. */
async function sampleOf(
  archive: string,
  percent: number,
  seed: number,
): Promise<{ paths: string[]; strata: Set<string> }> {
  const zip = await openArchive(archive);
  try {
    const plan = await readCheckPlan(zip, { percent }, seed);
    return {
      paths: plan.sample.map((s) => s.entry.path),
      strata: new Set(plan.sample.map((s) => `${s.resource.prototype} ${s.resource.kind} ${s.resource.format ?? ''}`)),
    };
  } finally {
    zip.close();
  }
}

describe('verify --against-live', () => {
  it('an untouched service matches everything: exit 0, every list and resource checked', async () => {
    const service = await serve();
    const archive = await exported(service);
    const report = await check(service, archive);
    expect(report.differences).toEqual([]);
    expect(report.failureCount).toBe(0);
    expect(report.complete).toBe(true);
    expect(report.sampled).toBe(report.population);
    expect(report.sampledChecked).toBe(report.population);
    expect(report.lists.checked).toBe(report.lists.total);
    expect(report.share).toBe(1);
    expect(liveVerdict(report)).toBe('match');
    expect(report.byKind.element?.matched).toBeGreaterThan(10);
  }, 60_000);

  it('reports exactly the edited element, renamed page, added discussion and deleted prototype at --sample 100%', async () => {
    const service = await serve();
    const archive = await exported(service);
    const before = service.store.head('1001')?.milestones.length ?? 0;
    const { prototype, page, renamed, element, discussion } = edit(service);
    const report = await check(service, archive, { sample: { percent: 100 } });
    expect(report.differences.map(named).sort()).toEqual(expected({ prototype, page, renamed, element, discussion }));
    const changed = report.differences.find((d) => d.kind === 'element');
    expect(changed).toMatchObject({ archivedRevision: before, liveRevision: before + 3 });
    expect(report.byPrototype[prototype]).toMatchObject({ archivedRevision: before, liveRevision: before + 3 });
    expect(report.byKind.discussion).toMatchObject({ new: 1 });
    expect(liveVerdict(report)).toBe('drift');
  }, 60_000);

  it('at --sample 5% the lists still reveal the added discussion and the deleted prototype; every prototype and kind is sampled', async () => {
    const service = await serve();
    const archive = await exported(service);
    const e = edit(service);
    const report = await check(service, archive, { sample: { percent: 5 } });
    const found = report.differences.map(named);
    expect(found).toContain('gone prototype 1002 1002');
    expect(found).toContain(`new discussion ${e.prototype} ${e.discussion}`);
    expect(report.sampled).toBeLessThan(report.population / 4);
    expect(report.lists.checked).toBe(report.lists.total);
    // Stratified: the 5% holds a resource of every kind of every prototype the whole archive has.
    expect((await sampleOf(archive, 5, 7)).strata).toEqual((await sampleOf(archive, 100, 7)).strata);
  }, 60_000);

  it('the same seed picks the same sample; another seed, another', async () => {
    const service = await serve();
    const archive = await exported(service);
    const first = await sampleOf(archive, 10, 4242);
    expect((await sampleOf(archive, 10, 4242)).paths).toEqual(first.paths);
    expect((await sampleOf(archive, 10, 4243)).paths).not.toEqual(first.paths);
  }, 60_000);

  it('the CLI prints the seed; --seed repeats it; drift is exit 3 with a JSON record per difference and no key', async () => {
    const service = await serve();
    const archive = await exported(service);
    const env = { RABBIT_API_KEY: service.keys.readOnly };
    const quiet = await runCli(['verify', archive, '--against-live', '--sample', '5%'], {
      register: registerVerify,
      env,
    });
    expect(quiet.code).toBe(0);
    const seed = /seed (\d+) \(the same sample again: --seed \1\)/.exec(quiet.stdout)?.[1];
    expect(seed).toBeDefined();
    expect(quiet.stdout).toContain('MATCHES');
    const e = edit(service);
    const args = ['verify', archive, '--against-live', '--sample', '5%', '--seed', seed as string, '--json'];
    const drift = await runCli(args, { register: registerVerify, env });
    expect(drift.code).toBe(3);
    const records = drift.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const summary = records.at(-1) as Record<string, unknown>;
    expect(summary).toMatchObject({ type: 'summary', ok: false, exitCode: 3, verdict: 'drift', seed: Number(seed) });
    const differences = records.filter((r) => r['type'] === 'difference');
    expect(differences.length).toBe(summary['differences']);
    expect(differences).toContainEqual(
      expect.objectContaining({ status: 'new', kind: 'discussion', id: String(e.discussion) }),
    );
    expect(drift.stdout + drift.stderr + quiet.stdout + quiet.stderr).not.toContain(service.keys.readOnly);
  }, 60_000);

  it('through a 429 outage and a storm of 429 and 503 answers: waited out, the same differences, nothing failed', async () => {
    const original = await serve();
    const archive = await exported(original);
    const clock = fakeClock();
    // The same account from another instance (its pages do not name its port), stormy from its 30th request.
    const service = await serve({
      now: clock.now,
      outage: { atRequest: 30, forMs: 90_000, kind: '429' },
      faults: { rate: 0.25, kinds: ['429', '503'], seed: 3 },
    });
    const e = edit(service);
    const report = await check(service, archive, { now: clock.now, sleep: clock.sleep, concurrency: 4 });
    expect(report.differences.map(named).sort()).toEqual(expected(e));
    expect(report.failureCount).toBe(0);
    expect(report.complete).toBe(true);
    expect(report.outages.count).toBeGreaterThanOrEqual(1);
    expect(report.retries).toBeGreaterThan(0);
    expect(service.stats.faultsInjected).toBeGreaterThan(0);
  }, 60_000);

  it('a key revoked halfway stops the check within 2 x concurrency requests: not checked (exit 1), the key named by its place', async () => {
    const service = await serve();
    const archive = await exported(service);
    service.setRevocation({ key: service.keys.readOnly, afterRequests: 40 });
    const report = await check(service, archive, { concurrency: 4 });
    expect(report.stoppedBy).toBe('KEY_REFUSED');
    expect(report.keysRefused).toEqual([1]);
    expect(report.complete).toBe(false);
    expect(liveVerdict(report)).toBe('unchecked');
    expect(service.store.keyRing.refusedAfterRevocation).toBeGreaterThan(0);
    expect(service.store.keyRing.refusedAfterRevocation).toBeLessThanOrEqual(2 * 4);

    service.setRevocation({ key: service.keys.readOnly, afterRequests: 40 });
    const run = await runCli(['verify', archive, '--against-live', '--concurrency', '4'], {
      register: registerVerify,
      env: { RABBIT_API_KEY: service.keys.readOnly },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('refused API key number 1 during the check');
    expect(run.stdout + run.stderr).not.toContain(service.keys.readOnly);
  }, 60_000);

  it('--max-requests stops within the budget and says what share was checked', async () => {
    const service = await serve();
    const archive = await exported(service);
    const before = service.stats.requests;
    const report = await check(service, archive, { maxRequests: 25, concurrency: 4 });
    expect(service.stats.requests - before).toBeLessThanOrEqual(25);
    expect(report.stoppedBy).toBe('max-requests');
    expect(report.complete).toBe(false);
    expect(report.share).toBeGreaterThan(0);
    expect(report.share).toBeLessThan(1);
    expect(report.failureCount).toBe(0);
    expect(liveVerdict(report)).toBe('match');
  }, 60_000);

  it('--max-duration stops the check when its clock runs out, with the share checked so far', async () => {
    const service = await serve();
    const archive = await exported(service);
    const before = service.stats.requests;
    // The duration's timer, run by the test: it expires once the service has answered 30 requests.
    const deadlineTimer = (_ms: number, expire: () => void): (() => void) =>
      whenever(() => service.stats.requests - before >= 30, expire, { intervalMs: 1 });
    const report = await check(service, archive, { maxDurationMs: 60_000, deadlineTimer, concurrency: 2 });
    expect(report.stoppedBy).toBe('max-duration');
    expect(report.complete).toBe(false);
    expect(report.share).toBeLessThan(1);
    expect(report.failureCount).toBe(0);
    expect(liveVerdict(report)).toBe('match');
  }, 60_000);

  it('--sample, --seed and --max-requests without --against-live are usage errors, not ignored', async () => {
    const service = await serve();
    const archive = await exported(service);
    for (const flags of [
      ['--sample', '5%'],
      ['--seed', '3'],
      ['--max-requests', '10'],
    ]) {
      const run = await runCli(['verify', archive, ...flags], { register: registerVerify });
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr).toContain(`${flags[0] ?? ''} is for verify --against-live`);
    }
  }, 60_000);

  it('the service flags without --against-live are usage errors too, defaults given or not', async () => {
    const service = await serve();
    const archive = await exported(service);
    for (const flags of [
      ['--max-rps', '3'],
      ['--concurrency', '8'],
      ['--timeout', '5'],
      ['--retries', '2'],
      ['--max-size', 'json=3'],
      ['--base-url', service.baseUrl],
      ['--allow-insecure-http'],
      ['--speed-limit', '5'],
      ['--outage-patience', '0'],
    ]) {
      const run = await runCli(['verify', archive, ...flags], { register: registerVerify });
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr).toContain(`${flags[0] ?? ''} is for verify --against-live`);
    }
    // Plain verify with its own flags still runs.
    expect((await runCli(['verify', archive, '--quiet'], { register: registerVerify })).code).toBe(0);
  }, 60_000);
});
