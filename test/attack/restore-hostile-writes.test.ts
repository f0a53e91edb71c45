import { describe, expect, it } from 'vitest';
import { restorePrototype, type RestoreOptions } from '../../src/restore/restore-prototype.js';
import {
  PROTO,
  archivedElements,
  contents,
  damagedArchiveFixture,
  liveContents,
  restoreOptions,
} from '../restore/restore-helpers.js';

const fixture = damagedArchiveFixture({ name: 'night.zip' });

const PAGE_LIST = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements.json`;

/** Waits are the test's: none takes real time, however long the service asks for. */
function options(extra: Partial<RestoreOptions> = {}): RestoreOptions {
  return restoreOptions(fixture.service, fixture.archive, {
    sleep: async (_ms, signal) => signal.throwIfAborted(),
    ...extra,
  });
}

describe('restore writes against a service that says "not now"', () => {
  it('a storm of 429 on the creates is waited out: every element restored, none twice', async () => {
    const report = await restorePrototype(
      options({
        onEvent: (event) => {
          // Once planned, the page's list answers 429 (with Retry-After) to its next five requests: POSTs and the listings between them.
          if (event.type === 'plan') fixture.service.setFaults({ paths: [{ path: PAGE_LIST, kind: '429', times: 5 }] });
        },
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.failed).toEqual([]);
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(fixture.service)).toEqual(contents(await archivedElements(fixture.archive)));
  });
});

describe('restore writes against a service that never finishes answering', () => {
  it('a POST answer whose body trickles for ever is cut by the stall watchdog, and the element is created once', async () => {
    const report = await restorePrototype(
      options({
        stall: { minBytesPerSecond: 1024, windowMs: 300 },
        onEvent: (event) => {
          // The first POST is answered 200 without a Location, its body one byte every 20 ms, never ending.
          if (event.type === 'plan')
            fixture.service.setFaults({ paths: [{ path: PAGE_LIST, kind: 'trickle', times: 1 }], trickleMs: 20 });
        },
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.failed).toEqual([]);
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(liveContents(fixture.service)).toEqual(contents(await archivedElements(fixture.archive)));
  }, 15_000);
});
