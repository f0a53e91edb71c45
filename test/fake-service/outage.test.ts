import { describe, expect, it } from 'vitest';
import { afterEach } from 'vitest';
import { startFakeService, type FakeService, type OutageOptions } from '../../src/fake-service/index.js';
import { skippingClock } from '../helpers/skipping-clock.js';

// The fake service can go away as a deploy or a restart takes a service away (issue 27).

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(
  outage: OutageOptions,
  now?: () => number,
  timer?: (ms: number, fire: () => void) => () => void,
): Promise<FakeService> {
  const service = await startFakeService({ outage, ...(now ? { now } : {}), ...(timer ? { timer } : {}) });
  services.push(service);
  return service;
}

const LIST = '/rabbit/api/prototypes.json';

async function ask(service: FakeService): Promise<{ status: number; retryAfter: string | null } | { code: string }> {
  try {
    const response = await fetch(`${service.baseUrl}${LIST}?api_key=${service.keys.readOnly}`);
    await response.arrayBuffer();
    return { status: response.status, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    return { code: String((error as { cause?: { code?: unknown } }).cause?.code) };
  }
}

describe('fake service outages', () => {
  it('down: the chosen request is cut off, connections are refused, then it listens again on the same port', async () => {
    // The window passes on a clock the test moves on, not in real time.
    const clock = skippingClock();
    const service = await serve({ atRequest: 2, forMs: 1_500, kind: 'down' }, clock.now, clock.timer);
    expect(await ask(service)).toMatchObject({ status: 200 });
    expect(await ask(service)).toMatchObject({ code: expect.stringMatching(/^(ECONNRESET|UND_ERR_SOCKET)$/) });
    expect(await ask(service)).toEqual({ code: 'ECONNREFUSED' });
    clock.skip(1_500);
    await service.back();
    expect(await ask(service)).toMatchObject({ status: 200 });
  });

  it('503: everything answers 503 with Retry-After in seconds until the window ends', async () => {
    let now = Date.UTC(2026, 10, 25, 3, 12, 7);
    const service = await serve({ atRequest: 2, forMs: 10_000, kind: '503' }, () => now);
    expect(await ask(service)).toMatchObject({ status: 200 });
    expect(await ask(service)).toEqual({ status: 503, retryAfter: '10' });
    now += 4_000;
    expect(await ask(service)).toEqual({ status: 503, retryAfter: '6' });
    now += 6_000;
    expect(await ask(service)).toMatchObject({ status: 200 });
  });

  it('429: everything answers 429 with Retry-After as the HTTP date the window ends', async () => {
    let now = Date.UTC(2026, 10, 25, 3, 12, 7, 500);
    const service = await serve({ atRequest: 1, forMs: 12_000, kind: '429' }, () => now);
    // Rounded up to the whole second: whoever waits as told finds the service back.
    expect(await ask(service)).toEqual({ status: 429, retryAfter: 'Wed, 25 Nov 2026 03:12:20 GMT' });
    now += 11_000;
    expect(await ask(service)).toEqual({ status: 429, retryAfter: 'Wed, 25 Nov 2026 03:12:20 GMT' });
    now += 1_000;
    expect(await ask(service)).toMatchObject({ status: 200 });
  });

  it('closing during an outage does not wait for it to end', async () => {
    const service = await serve({ atRequest: 1, forMs: 600_000, kind: 'down' });
    await ask(service);
    await service.close();
    expect(await ask(service)).toEqual({ code: 'ECONNREFUSED' });
  });
});
