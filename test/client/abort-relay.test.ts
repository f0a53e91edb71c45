import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { abortRelay } from '../../src/client/abort-relay.js';
import { HttpClient } from '../../src/client/http-client.js';
import { isRabbitError } from '../../src/core/errors.js';
import { until } from '../helpers/until.js';

describe('abortRelay', () => {
  it('is one relay per signal, and carries its abort and reason', () => {
    const controller = new AbortController();
    const relay = abortRelay(controller.signal);
    expect(abortRelay(controller.signal)).toBe(relay);
    expect(abortRelay(new AbortController().signal)).not.toBe(relay);
    const heard: unknown[] = [];
    relay.once('abort', () => heard.push(relay.reason));
    const reason = new Error('SIGINT');
    controller.abort(reason);
    expect(relay.aborted).toBe(true);
    expect(heard).toEqual([reason]);
  });

  it('of a signal already aborted is aborted from the start', () => {
    const reason = new Error('too late');
    const relay = abortRelay(AbortSignal.abort(reason));
    expect(relay.aborted).toBe(true);
    expect(relay.reason).toBe(reason);
  });
});

describe('HttpClient requests in flight', () => {
  const held: ServerResponse[] = [];
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    for (const res of held.splice(0)) res.destroy();
    await close?.();
    close = undefined;
  });

  /** A server that answers nothing until the test lets it; counts what it was asked. */
  async function silentServer(): Promise<{ baseUrl: string; seen: () => number }> {
    let count = 0;
    const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
      count++;
      held.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen: () => count };
  }

  it('listen on the run signal once between them, and all stop at its abort', async () => {
    const { baseUrl, seen } = await silentServer();
    const client = new HttpClient({ baseUrl, connections: 4, timeoutMs: 30_000 });
    const controller = new AbortController();
    try {
      const requests = [1, 2, 3, 4].map((n) =>
        client.get(`/rabbit/api/prototypes/${n}.json`, { key: 'k', signal: controller.signal }).then(
          () => 'answered',
          (error: unknown) => error,
        ),
      );
      await until(() => seen() === 4, { what: 'four requests at the server' });
      // The relay's one listener, not one per request: a per-request listener on the AbortSignal
      // is what kept finished requests alive through young collections.
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      controller.abort(new Error('SIGINT'));
      const outcomes = await Promise.all(requests);
      for (const outcome of outcomes) expect(isRabbitError(outcome) ? outcome.code : outcome).toBe('INTERRUPTED');
      // A request asked for after the abort fails without being sent.
      const late = await client
        .get('/rabbit/api/prototypes/5.json', { key: 'k', signal: controller.signal })
        .catch((error: unknown) => error);
      expect(isRabbitError(late) ? late.code : late).toBe('INTERRUPTED');
      expect(seen()).toBe(4);
    } finally {
      await client.close();
    }
  });
});
