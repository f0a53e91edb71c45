import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
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

describe('stats', () => {
  test('count requests by path without the query, and statuses', async () => {
    await (await get(service, 'prototypes.json')).arrayBuffer();
    await (await get(service, 'prototypes.json', service.keys.readOnly)).arrayBuffer();
    await (await get(service, 'prototypes.json', null)).arrayBuffer();
    await (await get(service, 'prototypes/999.json')).arrayBuffer();
    expect(service.stats.requests).toBe(4);
    expect(service.stats.byPath.get('/rabbit/api/prototypes.json')).toBe(3);
    expect(service.stats.byPath.get('/rabbit/api/prototypes/999.json')).toBe(1);
    expect([...service.stats.statuses].sort()).toEqual([[200, 2], [401, 1], [404, 1]]);
    expect(service.stats.faultsInjected).toBe(0);
  });

  test('track requests in flight and their peak', async () => {
    service.setLatency(100);
    const pending = Array.from({ length: 6 }, () => fetch(apiUrl(service, 'prototypes/3.json')).then((r) => r.arrayBuffer()));
    await expect.poll(() => service.stats.inFlight).toBe(6);
    await Promise.all(pending);
    await expect.poll(() => service.stats.inFlight).toBe(0);
    expect(service.stats.peakInFlight).toBe(6);
  });

  test('reset() starts over', async () => {
    await (await get(service, 'prototypes.json')).arrayBuffer();
    service.stats.reset();
    expect(service.stats.requests).toBe(0);
    expect(service.stats.byPath.size).toBe(0);
    expect(service.stats.statuses.size).toBe(0);
    expect(service.stats.peakInFlight).toBe(0);
  });
});

describe('latency', () => {
  test('delays every response by about latencyMs, set at start or later', async () => {
    const slow = await startFakeService({ latencyMs: 150 });
    try {
      const started = Date.now();
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      slow.setLatency(0);
      const again = Date.now();
      await (await fetch(apiUrl(slow, 'prototypes.json'))).arrayBuffer();
      expect(Date.now() - again).toBeLessThan(140);
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
    service.setLatency(200);
    const started = Date.now();
    await Promise.all(Array.from({ length: 40 }, () => fetch(apiUrl(service, 'prototypes.json')).then((r) => r.arrayBuffer())));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
