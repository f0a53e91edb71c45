import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fetchResource, type AttemptEvent, type FetchContext } from '../../src/crawl/fetch-resource.js';
import { HttpClient } from '../../src/client/http-client.js';
import type { OutageMonitor } from '../../src/client/outage-monitor.js';
import type { Verdict } from '../../src/client/outage-policy.js';
import { RETRY_DEFAULTS } from '../../src/client/retry-policy.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { Spool } from '../../src/storage/spool.js';
import { useFakeService } from '../helpers/fake-service.js';

// The fetch loop's side of an outage (issue 27): attempts spent because of one are given back.

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const META = '/rabbit/api/prototypes/3.json';

/** An outage monitor that gives the verdicts the test scripts, and says whether a probe confirmed each pause. */
function scripted(verdicts: Verdict[], confirmed: boolean): OutageMonitor & { answers: number } {
  const monitor = {
    answers: 0,
    answered: () => void monitor.answers++,
    failed: () => verdicts.shift() ?? 'go-on',
    waitForService: () => Promise.resolve(confirmed),
    backoff: () => Promise.resolve(false),
  };
  return monitor as unknown as OutageMonitor & { answers: number };
}

async function fetchWith(
  outage: OutageMonitor,
  attempts: number,
  events: AttemptEvent[],
): Promise<Awaited<ReturnType<typeof fetchResource>>> {
  const client = new HttpClient({ baseUrl: service.baseUrl, connections: 2, timeoutMs: 30_000 });
  const spool = new Spool(join(dir, 'spool'));
  await spool.init();
  const ctx: FetchContext = {
    client,
    spool,
    retry: { ...RETRY_DEFAULTS, attempts },
    signal: new AbortController().signal,
    random: () => 0.5,
    now: () => 0,
    onAttempt: (event) => events.push(event),
    sleep: () => Promise.resolve(),
    outage,
  };
  try {
    return await fetchResource(ctx, { source: META, key: service.keys.readOnly, maxBytes: 1 << 20, keep: true });
  } finally {
    await client.close();
    await spool.close();
  }
}

describe('fetchResource during an outage', () => {
  it('gives back the attempts that led into a confirmed outage', async () => {
    // 502, 502, 502, then the answer; the second failure is the one that found the service gone.
    service.setFaults({ paths: [{ path: META, kind: '502', times: 3 }] });
    const events: AttemptEvent[] = [];
    const monitor = scripted(['go-on', 'outage', 'go-on'], true);
    // Two attempts: without the first one given back, the third failure would be the last.
    const result = await fetchWith(monitor, 2, events);
    expect(result).toMatchObject({ status: 200, attempts: 4 });
    // Retries the resource spent on its own: the first and the third failure, not the outage's.
    expect(events.filter((e) => e.type === 'retry').map((e) => e.attempt)).toEqual([1, 3]);
    expect(monitor.answers).toBe(1);
  });

  it('an outage no probe confirmed gives attempts back only once (two bad resources cannot pause the run for ever)', async () => {
    service.setFaults({ paths: [{ path: META, kind: '502' }] });
    const monitor = scripted(['go-on', 'outage', 'go-on', 'outage', 'go-on', 'outage', 'go-on', 'outage'], false);
    const error = await fetchWith(monitor, 3, []).catch((caught: unknown) => caught);
    expect(isRabbitError(error, 'HTTP_STATUS')).toBe(true);
    // 1 charged, given back; 1 charged; kept; 2 charged; kept; 3 charged: the last.
    expect((error as { attempts?: number }).attempts).toBe(7);
  });

  it('a failure that is not the service’s (500) never asks the monitor', async () => {
    service.setFaults({ paths: [{ path: META, kind: '500', times: 1 }] });
    let asked = 0;
    const monitor = scripted([], true);
    monitor.failed = () => {
      asked++;
      return 'outage';
    };
    const result = await fetchWith(monitor, 2, []);
    expect(result).toMatchObject({ status: 200, attempts: 2 });
    expect(asked).toBe(0);
  });
});
