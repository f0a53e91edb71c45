import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fetchResource, type AttemptEvent, type FetchContext } from '../../src/crawl/fetch-resource.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { useFakeService } from '../helpers/fake-service.js';
import { testFetchContext } from './fetch-context.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const META = '/rabbit/api/prototypes/3.json';

/** A fetch context whose backoff waits are recorded, not slept: the retries take no time. */
async function context(
  waits: number[],
  events: AttemptEvent[],
): Promise<{ ctx: FetchContext; close: () => Promise<void> }> {
  return testFetchContext(service.baseUrl, join(dir, 'spool'), {
    onAttempt: (event) => events.push(event),
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
}

describe('fetchResource backoff', () => {
  it('waits out each retry through the injected sleep, honouring Retry-After, then succeeds', async () => {
    // Two 503s with "Retry-After: 1", then the real answer.
    service.setFaults({ paths: [{ path: META, kind: '503', times: 2 }] });
    const waits: number[] = [];
    const events: AttemptEvent[] = [];
    const { ctx, close } = await context(waits, events);
    try {
      const result = await fetchResource(ctx, {
        source: META,
        key: service.keys.readOnly,
        maxBytes: 1 << 20,
        keep: true,
      });
      expect(result).toMatchObject({ status: 200, attempts: 3 });
      expect(waits).toEqual([1000, 1000]);
      expect(events.filter((e) => e.type === 'retry').map((e) => e.delayMs)).toEqual(waits);
    } finally {
      await close();
    }
  });

  it('without Retry-After waits the jittered, doubling backoff', async () => {
    service.setFaults({ paths: [{ path: META, kind: '500', times: 3 }] });
    const waits: number[] = [];
    const { ctx, close } = await context(waits, []);
    try {
      await fetchResource(ctx, { source: META, key: service.keys.readOnly, maxBytes: 1 << 20, keep: true });
      // Half of 250, 500 and 1000 ms: the random draw is fixed at 0.5.
      expect(waits).toEqual([125, 250, 500]);
    } finally {
      await close();
    }
  });
});
