import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { restorePrototype, type RestoreEvent } from '../../src/restore/restore-prototype.js';
import { runCli } from '../helpers/cli.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';
import {
  PROTO,
  damage,
  exportPrototype,
  fakeClock,
  restoreOptions,
  servicesClosedAfterEach,
} from './restore-helpers.js';

// The writes of a restore go one at a time: one that waits a minute for Retry-After holds the
// whole restore for that minute, and someone watching it must be told why nothing moves.

const serve = servicesClosedAfterEach();

/** Two kinds of mistake to undo: one whose first write is a create (POST), one whose only write is an update (PUT). */
const MISTAKES: Record<'POST' | 'PUT', (service: FakeService) => void> = {
  POST: (service) => void damage(service),
  PUT: (service) => {
    const page = service.store.page(PROTO, 'page0002')!;
    service.store.updateElement(PROTO, 'page0002', page.elements[0]!.id, { position: { x: 9, y: 9 } });
  },
};

/** The archive, and how many requests a restore of `mistake` makes before its first write. */
async function beforeFirstWrite(dir: string, mistake: (service: FakeService) => void) {
  const archive = await exportPrototype(await serve(), dir, 'night.zip');
  const twin = await serve();
  mistake(twin);
  await restorePrototype(restoreOptions(twin, archive, { dryRun: true }));
  return { archive, planning: twin.stats.requests };
}

describe('a restore tells the waits of its requests as they begin', () => {
  it.each(['POST', 'PUT'] as const)(
    'a %s answered 429 with a minute of Retry-After is told before the minute, not after it',
    async (method) => {
      const dir = await tempDir();
      const { archive, planning } = await beforeFirstWrite(dir, MISTAKES[method]);
      const clock = fakeClock();
      // From the first write on, the service asks everyone to wait a minute.
      const service = await serve({ now: clock.now, outage: { atRequest: planning + 1, forMs: 60_000, kind: '429' } });
      MISTAKES[method](service);
      const seen: Array<{ event: RestoreEvent; at: number }> = [];
      const report = await restorePrototype(
        restoreOptions(service, archive, {
          journal: join(dir, 'waits.jsonl'),
          now: clock.now,
          sleep: clock.sleep,
          onEvent: (event) => seen.push({ event, at: clock.now() }),
        }),
      );
      expect(report.fatal).toBeUndefined();
      expect(report.failed).toEqual([]);
      const wait = seen.find(({ event }) => event.type === 'retry');
      expect(wait?.event).toMatchObject({ type: 'retry', method, reason: '429', attempt: 1 });
      const delayMs = wait?.event.type === 'retry' ? wait.event.delayMs : 0;
      expect(delayMs).toBeGreaterThanOrEqual(59_000);
      // Told when the wait began: the first write is answered a whole wait later.
      const firstWrite = seen.find(({ event }) => event.type === 'write');
      expect(firstWrite!.at - wait!.at).toBeGreaterThanOrEqual(delayMs);
    },
    15_000,
  );

  it('says on stderr which request waits, for what answer and how long', async () => {
    const dir = await tempDir();
    const { archive, planning } = await beforeFirstWrite(dir, MISTAKES.PUT);
    const clock = skippingClock();
    const service = await serve({ now: clock.now, outage: { atRequest: planning + 1, forMs: 60_000, kind: '429' } });
    MISTAKES.PUT(service);
    const run = await runCli(['restore', archive, '--prototype', PROTO, '--journal', join(dir, 'waits.jsonl')], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
      clock,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^PUT /rabbit/api/prototypes/${PROTO}/pages/page0002/elements/element\\d+\\.json answered 429: trying again in (59 s|1 min)$`,
        'm',
      ),
    );
    expect(run.stderr.match(/answered 429/g)).toHaveLength(1);
    expect(run.stdout).toMatch(/updated element\d+ on page0002/);
  }, 15_000);
});
