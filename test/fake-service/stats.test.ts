import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { sleepGate } from '../helpers/sleep-gate.js';
import { until } from '../helpers/until.js';
import { apiUrl, get } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterEach(() => {
  service.setLatency(0);
  service.stats.reset();
});
afterAll(() => service.close());

/**
 * Sends `count` requests to a service whose latency waits are all held, runs `check` once every
 * one of them is waiting (so all are in flight together), then lets them finish.
 */
async function holdRequests(count: number, path: string, check: (held: FakeService) => void): Promise<FakeService> {
  const gate = sleepGate();
  const held = await startFakeService({ latencyMs: 100, sleep: gate.sleep });
  try {
    const pending = Array.from({ length: count }, () => fetch(apiUrl(held, path)).then((r) => r.arrayBuffer()));
    await gate.pending(count);
    check(held);
    gate.release();
    await Promise.all(pending);
    return held;
  } finally {
    await held.close();
  }
}

describe('stats', () => {
  test('count requests by path without the query, and statuses', async () => {
    await (await get(service, 'prototypes.json')).arrayBuffer();
    await (await get(service, 'prototypes.json', service.keys.readOnly)).arrayBuffer();
    await (await get(service, 'prototypes.json', null)).arrayBuffer();
    await (await get(service, 'prototypes/999.json')).arrayBuffer();
    expect(service.stats.requests).toBe(4);
    expect(service.stats.byPath.get('/rabbit/api/prototypes.json')).toBe(3);
    expect(service.stats.byPath.get('/rabbit/api/prototypes/999.json')).toBe(1);
    expect([...service.stats.statuses].sort()).toEqual([
      [200, 2],
      [401, 1],
      [404, 1],
    ]);
    expect(service.stats.faultsInjected).toBe(0);
  });

  test('track requests in flight and their peak', async () => {
    const held = await holdRequests(6, 'prototypes/3.json', (started) => {
      expect(started.stats.inFlight).toBe(6);
    });
    await until(() => held.stats.inFlight === 0, { what: 'no request in flight' });
    expect(held.stats.peakInFlight).toBe(6);
  });

  test('sum the time with requests in flight, for the mean number in flight while busy', async () => {
    const gate = sleepGate();
    const held = await startFakeService({ latencyMs: 100, sleep: gate.sleep });
    // The clock the stats read stands still but for the 200 ms moved below, while six are held.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const pending = Array.from({ length: 6 }, () =>
        fetch(apiUrl(held, 'prototypes/3.json')).then((r) => r.arrayBuffer()),
      );
      await gate.pending(6);
      const start = { inFlightMs: held.stats.inFlightMs, busyMs: held.stats.busyMs };
      vi.advanceTimersByTime(200);
      gate.release();
      await Promise.all(pending);
      await until(() => held.stats.inFlight === 0, { what: 'no request in flight' });
      // Six held for 200 ms: that time counts six times over, and the service was busy for it once.
      expect(held.stats.inFlightMs - start.inFlightMs).toBe(6 * 200);
      expect(held.stats.busyMs - start.busyMs).toBe(200);
    } finally {
      vi.useRealTimers();
      await held.close();
    }
  });

  test('reset() starts over', async () => {
    await (await get(service, 'prototypes.json')).arrayBuffer();
    service.stats.reset();
    expect(service.stats.requests).toBe(0);
    expect(service.stats.byPath.size).toBe(0);
    expect(service.stats.statuses.size).toBe(0);
    expect(service.stats.peakInFlight).toBe(0);
    expect(service.stats.busyMs).toBe(0);
    expect(service.stats.inFlightMs).toBe(0);
  });
});

describe('latency', () => {
  test('delays every response by latencyMs, set at start or later', async () => {
    // A frozen clock: answering takes no time, so the whole latency is left to wait.
    const gate = sleepGate();
    gate.release();
    const slow = await startFakeService({ latencyMs: 150, now: () => 0, sleep: gate.sleep });
    try {
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(gate.asked).toEqual([150]);
      slow.setLatency(0);
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(gate.asked).toEqual([150]);
      slow.setLatency(40);
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(gate.asked).toEqual([150, 40]);
    } finally {
      await slow.close();
    }
  });

  test('only the part of the latency that answering did not take is waited', async () => {
    let clock = 0;
    const gate = sleepGate();
    gate.release();
    // Each reading of the clock moves it on 30 ms: answering "takes" 30 ms of the 100.
    const slow = await startFakeService({ latencyMs: 100, now: () => (clock += 30), sleep: gate.sleep });
    try {
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(gate.asked).toEqual([70]);
    } finally {
      await slow.close();
    }
  });

  test('close() can be called twice', async () => {
    const other = await startFakeService();
    await other.close();
    await expect(other.close()).resolves.toBeUndefined();
  });

  test('many delayed requests run concurrently, not one after another', async () => {
    // All forty must be waiting out their latency at the same time before any is let go;
    // a service that answered one after another would never get there.
    await holdRequests(40, 'prototypes.json', (started) => {
      expect(started.stats.inFlight).toBe(40);
    });
  });
});
