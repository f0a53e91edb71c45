import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { restorePrototype, type RestoreEvent } from '../../src/restore/restore-prototype.js';
import { STALL_DEFAULTS } from '../../src/client/transfer-watchdog.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';
import {
  PROTO,
  archivedElements,
  contents,
  damage,
  exportPrototype,
  fakeClock,
  liveContents,
  restoreOptions,
  servicesClosedAfterEach,
} from './restore-helpers.js';

// issue 35: restore goes through the export's client, so it waits out an outage and cuts a
// stalled body as the export does, instead of failing its writes or hanging on a read.

const serve = servicesClosedAfterEach();

describe('restore through an outage', () => {
  it('a service answering 503 to everything for 5 minutes mid-restore is waited out; the restore then completes', async () => {
    const dir = await tempDir();
    const archive = await exportPrototype(await serve(), dir, 'night.zip');
    // The same damage on a twin service, restored as a dry run: how many requests planning takes.
    const twin = await serve();
    damage(twin);
    await restorePrototype(restoreOptions(twin, archive, { dryRun: true }));
    const planning = twin.stats.requests;
    expect(planning).toBeGreaterThan(3);

    const clock = fakeClock();
    // From the second write on, everything is answered 503 for 5 minutes of the service's clock.
    const service = await serve({
      now: clock.now,
      outage: { atRequest: planning + 2, forMs: 5 * 60_000, kind: '503' },
    });
    damage(service);
    const events: RestoreEvent[] = [];
    const started = clock.now();
    const report = await restorePrototype(
      restoreOptions(service, archive, {
        journal: join(dir, 'outage.jsonl'),
        now: clock.now,
        sleep: clock.sleep,
        // One failure pauses: the writes go one at a time, so this is the failure that tells.
        outage: { failuresInARow: 1, distinctResources: 1 },
        onEvent: (event) => events.push(event),
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.failed).toEqual([]);
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(service)).toEqual(contents(await archivedElements(archive)));
    const outages = events.flatMap((event) => (event.type === 'outage' ? [event.state] : []));
    expect(outages[0]).toBe('started');
    expect(outages.at(-1)).toBe('back');
    expect(clock.now() - started).toBeGreaterThanOrEqual(5 * 60_000);
  }, 15_000);

  it('an outage past --outage-patience stops the restore with SERVICE_DOWN, the writes before it reported', async () => {
    const dir = await tempDir();
    const archive = await exportPrototype(await serve(), dir, 'night.zip');
    const twin = await serve();
    damage(twin);
    await restorePrototype(restoreOptions(twin, archive, { dryRun: true }));
    const clock = fakeClock();
    const service = await serve({
      now: clock.now,
      outage: { atRequest: twin.stats.requests + 2, forMs: 60 * 60_000, kind: '503' },
    });
    damage(service);
    const report = await restorePrototype(
      restoreOptions(service, archive, {
        journal: join(dir, 'patience.jsonl'),
        now: clock.now,
        sleep: clock.sleep,
        outage: { failuresInARow: 1, distinctResources: 1 },
        outagePatienceMs: 2 * 60_000,
      }),
    );
    expect(report.fatal?.code).toBe('SERVICE_DOWN');
    const written = report.done.create + report.done.update + report.done.delete;
    expect(written).toBe(1);
  }, 15_000);
});

describe('restore reads under the stall watchdog', () => {
  it('a list of elements that trickles for ever is cut, read again, and the restore completes', async () => {
    const dir = await tempDir();
    const service = await serve();
    const archive = await exportPrototype(service, dir, 'night.zip');
    damage(service);
    const list = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements.json`;
    service.setFaults({ paths: [{ path: list, kind: 'trickle', times: 1 }], trickleMs: 20 });
    const events: RestoreEvent[] = [];
    const report = await restorePrototype(
      restoreOptions(service, archive, {
        journal: join(dir, 'stall.jsonl'),
        stall: { minBytesPerSecond: 1024, windowMs: 300 },
        onEvent: (event) => events.push(event),
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(service)).toEqual(contents(await archivedElements(archive)));
    const retries = events.flatMap((event) => (event.type === 'retry' ? [event] : []));
    expect(retries).toEqual([expect.objectContaining({ method: 'GET', source: list, reason: 'STALLED' })]);
  }, 15_000);
});

describe("restore's writes under the stall watchdog, on the run's clock", () => {
  it('a POST answer that trickles is cut once the window has passed on the clock the restore was given', async () => {
    const dir = await tempDir();
    const service = await serve();
    const archive = await exportPrototype(service, dir, 'night.zip');
    damage(service);
    const list = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements.json`;
    // The default window (30 s at 1 KiB/s) passes on this clock only: the test moves it a second
    // every few milliseconds of real time once the writes begin, and never waits the window out.
    const clock = skippingClock();
    let ticking: NodeJS.Timeout | undefined;
    const restoring = restorePrototype(
      restoreOptions(service, archive, {
        journal: join(dir, 'post-stall.jsonl'),
        now: clock.now,
        sleep: clock.sleep,
        timer: clock.timer,
        onEvent: (event) => {
          if (event.type !== 'plan') return;
          // The first POST is applied and answered with its Location, then its body a byte every 20 ms, never ending.
          service.setFaults({ paths: [{ path: list, kind: 'trickle', times: 1 }], trickleMs: 20 });
          ticking = setInterval(() => clock.skip(1_000), 5);
        },
      }),
    );
    const report = await restoring.finally(() => clearInterval(ticking));
    expect(report.fatal).toBeUndefined();
    expect(report.failed).toEqual([]);
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(service)).toEqual(contents(await archivedElements(archive)));
    // Created once: the answer's Location said where, and the cut body only ended the wait for its end.
    expect(service.stats.byMethod.get('POST')).toBe(4);
    expect(service.stats.faultsInjected).toBe(1);
    expect(clock.skipped).toBeGreaterThanOrEqual(STALL_DEFAULTS.windowMs);
  }, 15_000);
});
