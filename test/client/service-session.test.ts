import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { isRabbitError, type RabbitError } from '../../src/core/errors.js';
import { discardBody } from '../../src/client/http-client.js';
import { openServiceSession, type RequestLimiter, type SessionSettings } from '../../src/client/service-session.js';
import type { OutageEvent } from '../../src/client/outage-monitor.js';

// issue 44, item 2: export, live check and restore each assembled the client, the rate limiter,
// the key watch, the outage pause and the adaptive concurrency themselves. One session does it.

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(): Promise<FakeService> {
  const service = await startFakeService({ seed: 1 });
  services.push(service);
  return service;
}

/** A limiter that writes down what the session asks of it. */
function recordingLimiter(): RequestLimiter & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    hold: () => calls.push('hold'),
    release: () => calls.push('release'),
    resize: (value) => calls.push(`resize ${value}`),
  };
}

/** A sleep that ends only when its signal aborts, noting that it did. */
function endlessSleep(): { sleep: SessionSettings['sleep'] & object; ended: AbortSignal[] } {
  const ended: AbortSignal[] = [];
  return {
    ended,
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener(
          'abort',
          () => {
            ended.push(signal);
            reject(signal.reason as Error);
          },
          { once: true },
        );
      }),
  };
}

describe('openServiceSession', () => {
  it('builds every part from the settings: the rate limit only with maxRps, the adaptive concurrency at the command’s width', async () => {
    const service = await serve();
    const limiter = recordingLimiter();
    const base = { baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 6, timeoutMs: 5_000 };
    const run = { signal: new AbortController().signal, now: Date.now, limiter, giveUp: () => undefined };
    const plain = openServiceSession(base, run);
    const paced = openServiceSession({ ...base, maxRps: 5, retry: { attempts: 2 } }, run);
    try {
      expect(plain.context.rateLimiter).toBeUndefined();
      expect(paced.context.rateLimiter).toBeDefined();
      expect(paced.context.retry.attempts).toBe(2);
      expect(plain.context.client).toBe(plain.client);
      expect(plain.context.adaptive.value).toBe(6);
      plain.context.adaptive.throttled();
      expect(limiter.calls).toEqual(['resize 3']);
      const response = await plain.client.get('/rabbit/api/prototypes.json', { key: service.keys.readOnly });
      expect(response.status).toBe(200);
      await discardBody(response.body);
    } finally {
      await Promise.all([plain.close(), paced.close()]);
    }
  });

  it('paces --max-rps on the session’s sleep, as its retries and outages wait, never on a timer of its own', async () => {
    const service = await serve();
    const waits: number[] = [];
    const session = openServiceSession(
      {
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        concurrency: 2,
        timeoutMs: 5_000,
        maxRps: 2,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      },
      { signal: new AbortController().signal, now: () => 0, limiter: recordingLimiter(), giveUp: () => undefined },
    );
    try {
      const pace = session.context.rateLimiter;
      await pace?.take();
      await pace?.take();
      await pace?.take();
      expect(waits).toEqual([500, 1000]);
    } finally {
      await session.close();
    }
  });

  it('close destroys the connection pool it made, and ends the outage’s probing, which held the limiter', async () => {
    const service = await serve();
    const limiter = recordingLimiter();
    const { sleep, ended } = endlessSleep();
    const events: OutageEvent[] = [];
    const session = openServiceSession(
      { baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 2, timeoutMs: 5_000, sleep },
      {
        signal: new AbortController().signal,
        now: Date.now,
        limiter,
        onOutage: (event) => events.push(event),
        giveUp: () => undefined,
      },
    );
    const response = await session.client.get('/rabbit/api/prototypes.json', { key: service.keys.readOnly });
    await discardBody(response.body);
    // The service answered once, then three requests in a row found nothing there: an outage.
    const { outage } = session.context;
    outage.answered();
    for (const source of ['/a', '/b', '/c']) outage.failed(source, 'transport');
    expect(outage.paused).toBe(true);
    expect(limiter.calls).toEqual(['hold']);
    expect(events.map((event) => event.state)).toEqual(['started']);

    await session.close();
    expect(session.context.signal.aborted).toBe(true);
    // The probe loop was asleep on the session's signal: closing woke it, and it stopped.
    expect(ended).toHaveLength(1);
    let failure: unknown;
    try {
      await session.client.get('/rabbit/api/prototypes.json', { key: service.keys.readOnly });
    } catch (error) {
      failure = error;
    }
    expect(isRabbitError(failure)).toBe(true);
    expect(String((failure as RabbitError).message)).toMatch(/destroyed/i);
  });

  it('leaves a dispatcher passed in to its owner', async () => {
    const service = await serve();
    const dispatcher = new Agent();
    try {
      const session = openServiceSession(
        { baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 2, timeoutMs: 5_000, dispatcher },
        { signal: new AbortController().signal, now: Date.now, limiter: recordingLimiter(), giveUp: () => undefined },
      );
      await session.close();
      expect(dispatcher.destroyed).toBe(false);
      expect(dispatcher.closed).toBe(false);
    } finally {
      await dispatcher.close();
    }
  });

  it('a key the service stops honouring, found by the key watch, stops the command with KEY_REFUSED when it was the last', async () => {
    const service = await serve();
    const limiter = recordingLimiter();
    const stopped: RabbitError[] = [];
    const key = service.keys.readOnly;
    const session = openServiceSession(
      { baseUrl: service.baseUrl, keys: [key], concurrency: 2, timeoutMs: 5_000 },
      { signal: new AbortController().signal, now: Date.now, limiter, giveUp: (error) => stopped.push(error) },
    );
    try {
      session.context.keys.answered(key);
      service.setRevocation({ key, afterRequests: 0 });
      const refusal = await session.context.keys.judge(key, session.context.keys.sending(), 401, '/x.json');
      expect(refusal).toMatchObject({ keyNumber: 1, status: 401 });
      expect(stopped.map((error) => error.code)).toEqual(['KEY_REFUSED']);
      expect(stopped[0]?.message).toMatch(/^the service refused API key number 1 from /);
      // The check held the limiter, and let go of it.
      expect(limiter.calls).toEqual(['hold', 'release']);
    } finally {
      await session.close();
    }
  });
});
