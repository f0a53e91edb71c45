import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeRequests, type FakeService } from '../../src/fake-service/index.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { restorePrototype, type RestoreEvent } from '../../src/restore/restore-prototype.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { startFakeService } from '../../src/fake-service/index.js';
import {
  PROTO,
  archivedElements,
  contents,
  damage,
  exportPrototype,
  liveContents,
  restoreOptions,
} from './restore-helpers.js';

// issue 44: restore reaches the service through the same session as export and live check (the
// key watch, adaptive concurrency), shows its own defaults and honours every flag it takes.

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

function restoreCli(archive: string, ...args: string[]): ReturnType<typeof runCli> {
  return runCli(['restore', archive, '--prototype', PROTO, '--json', ...args], {
    register: registerRestore,
    env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
  });
}

const summaryOf = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;

describe('restore: its own defaults, in its help and in what it does', () => {
  it('--help shows the concurrency restore applies, 4, and a run without -c keeps at most 4 requests in flight', async () => {
    const help = await runCli(['restore', '--help'], { register: registerRestore });
    const line = help.stdout.split('\n').find((text) => text.includes('--concurrency')) ?? '';
    expect(line).toContain('(default: 4)');

    const archive = await exportPrototype(service, dir, 'night.zip');
    damage(service);
    // Each answer waits a little, so the element reads of a page (5 of them) overlap.
    service.setLatency(20);
    service.stats.reset();
    const run = await restoreCli(archive, '--dry-run');
    expect(run.code).toBe(0);
    expect(service.stats.peakInFlight).toBe(4);
  });
});

describe('restore --max-size', () => {
  it('json=N refuses an answer of the service over N MiB, says so, and writes nothing; without it the same restore runs', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    damage(service);
    // The prototype's metadata, the first thing a restore reads, grows past 1 MiB.
    service.store.prototype(PROTO)!.name = 'n'.repeat(1536 * 1024);
    service.stats.reset();
    const capped = await restoreCli(archive, '--max-size', 'json=1');
    expect(capped.code).toBe(1);
    expect(summaryOf(capped.stdout)).toMatchObject({ ok: false, error: { code: 'BODY_TOO_LARGE' } });
    expect(capped.stderr).toMatch(
      /rabbit-export: GET \/rabbit\/api\/prototypes\/1001\.json: body exceeds 1048576 bytes/,
    );
    expect(writeRequests(service.stats)).toBe(0);

    const roomy = await restoreCli(archive, '--max-size', 'json=2', '--dry-run');
    expect(roomy.code).toBe(0);
    expect(summaryOf(roomy.stdout)).toMatchObject({ ok: true, create: 4, update: 2 });
  });

  it('a kind restore never reads (png, html) is refused rather than ignored', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    service.stats.reset();
    const run = await restoreCli(archive, '--max-size', 'png=512');
    expect(run.code).toBe(2);
    expect(summaryOf(run.stdout)).toMatchObject({ error: { code: 'USAGE' } });
    expect(run.stderr).toContain('restore reads only JSON');
    expect(service.stats.requests).toBe(0);
  });
});

describe('restore watches its key as export does', () => {
  it('a key the service starts refusing mid-restore stops it with the words export uses, the writes before it kept', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    // How many requests planning takes, from a dry run on a twin with the same damage.
    const twin = await startFakeService({ seed: 1 });
    try {
      damage(twin);
      await restorePrototype(restoreOptions(twin, archive, { dryRun: true }));
      damage(service);
      // The first two writes are answered; from the third on, the key is refused (401).
      service.setRevocation({ key: service.keys.readWrite, afterRequests: twin.stats.requests + 2 });
    } finally {
      await twin.close();
    }
    const run = await restoreCli(archive, '--journal', join(dir, 'revoked.jsonl'));
    expect(run.code).toBe(1);
    expect(summaryOf(run.stdout)).toMatchObject({ ok: false, error: { code: 'KEY_REFUSED' } });
    const summary = summaryOf(run.stdout) as { create: number; update: number; delete: number };
    expect(summary.create + summary.update + summary.delete).toBe(2);
    expect(run.stderr).toMatch(
      /the service refused API key number 1 from \d{4}-\d\d-\d\dT[\d:.]+Z on \(request \d+ of this run, HTTP 401 on \/rabbit\/api\//,
    );
    // A revoked key is not a read-only one: the next step says so.
    expect(run.stderr).not.toContain('read-only');
    expect(run.stderr).toMatch(/^next: the key is wrong, revoked/m);
    // The refused write and the check of the key: nothing more went out with it.
    expect(service.store.keyRing.refusedAfterRevocation).toBeLessThanOrEqual(2);
    expect(run.stdout + run.stderr).not.toContain(service.keys.readWrite);
  });
});

describe('restore adapts its concurrency as export does', () => {
  it('reads answered 429 halve the reads in flight, and the restore completes', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    damage(service);
    const page = service.store.page(PROTO, 'page0002')!;
    service.setFaults({
      paths: page.elements.map((element) => ({
        path: `/rabbit/api/prototypes/${PROTO}/pages/page0002/elements/${element.id}.json`,
        kind: '429' as const,
        times: 1,
      })),
    });
    let clock = Date.UTC(2026, 0, 1);
    const events: RestoreEvent[] = [];
    const report = await restorePrototype(
      restoreOptions(service, archive, {
        journal: join(dir, 'throttled.jsonl'),
        now: () => clock,
        // Retry-After is waited on this clock, not for real.
        sleep: (ms, signal) => {
          if (signal.aborted) return Promise.reject(signal.reason as Error);
          clock += ms;
          return new Promise((resolve) => setImmediate(resolve));
        },
        onEvent: (event) => events.push(event),
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(service)).toEqual(contents(await archivedElements(archive)));
    const widths = events.flatMap((event) => (event.type === 'concurrency' ? [event.value] : []));
    expect(widths[0]).toBe(2);
  });
});
