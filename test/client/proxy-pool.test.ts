import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { ExportEvent } from '../../src/export/events.js';
import type { OutageEvent } from '../../src/client/outage-monitor.js';
import { outageLine } from '../../src/cli/progress-line.js';
import { isRabbitError } from '../../src/core/errors.js';
import { readArchive } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { until } from '../helpers/until.js';
import { startConnectProxy, type TestProxy } from './connect-proxy.js';

/**
 * A TCP relay on a port of its own in front of `targetPort`: the address a run is given for its
 * proxy. `down()` is the proxy gone (its open connections cut, new ones refused); `up()` brings it
 * back on the same port.
 */
async function relay(targetPort: number) {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
    return socket;
  };
  const listen = async (port: number): Promise<Server> => {
    const server = createServer((client) => {
      const upstream = track(connect(targetPort, '127.0.0.1'));
      track(client).pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return server;
  };
  let server: Server | undefined = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const down = async (): Promise<void> => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise((resolve) => closing.close(resolve));
  };
  return {
    port,
    down,
    up: async () => {
      server ??= await listen(port);
    },
    close: down,
  };
}

/** Resolves once the service has answered `count` requests. */
function afterRequests(count: number): Promise<boolean> {
  return until(() => service.stats.requests >= count, { what: `${count} requests`, intervalMs: 2 });
}

const SECRET = 'pr0xy-s3cret';

let service: FakeService;
let proxy: TestProxy;
beforeEach(async () => {
  service = await startFakeService({ seed: 1, latencyMs: 5 });
  proxy = await startConnectProxy();
});
afterEach(async () => {
  await proxy.close();
  await service.close();
});

describe('the pool behind a proxy', () => {
  it('keeps `concurrency` keep-alive tunnels open and uses them in parallel', async () => {
    const out = join(await tempDir(), 'pooled.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      concurrency: 3,
      proxy: { httpProxy: proxy.url },
    });
    expect(result.complete).toBe(true);
    const target = new URL(service.baseUrl).host;
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(proxy.tunnels.every((tunnel) => tunnel === target)).toBe(true);
    expect(proxy.tunnels.length).toBeLessThanOrEqual(3);
    expect(proxy.plain).toEqual([]);
    expect(service.stats.peakInFlight).toBeGreaterThan(1);
    expect(service.stats.peakInFlight).toBeLessThanOrEqual(3);
  });

  it.each(['socks5', 'http-to-remote'])(
    'refuses an unusable transport (%s) as a usage error before it creates or sends anything',
    async (kind) => {
      const dir = await tempDir();
      const transport =
        kind === 'socks5'
          ? { baseUrl: 'https://rabbit.test', proxy: { httpsProxy: 'socks5://bob:hunter22@127.0.0.1:1080' } }
          : { baseUrl: 'http://rabbit.test', proxy: { httpProxy: proxy.url } };
      const error = await exportAccount({ out: join(dir, 'x.zip'), keys: [service.keys.readOnly], ...transport }).catch(
        (caught: unknown) => caught,
      );
      expect(isRabbitError(error, 'USAGE')).toBe(true);
      expect((error as Error).message).not.toContain('hunter22');
      expect(await readdir(dir)).toEqual([]);
      expect(proxy.tunnels).toEqual([]);
      expect(proxy.plain).toEqual([]);
    },
  );

  it('applies the timeout to a proxy that never answers CONNECT', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const error = await exportAccount({
        out: join(await tempDir(), 'x.zip'),
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        // The proxy never answers, so any timeout ends it the same way: a short one, not a second.
        timeoutMs: 200,
        retry: { attempts: 1 },
        proxy: { httpProxy: url },
      }).catch((caught: unknown) => caught);
      expect(isRabbitError(error, 'NO_ANSWER')).toBe(true);
      expect(service.stats.requests).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a proxy that goes away in the middle of a run is waited out like the service, and the archive is whole', async () => {
    const front = await relay(Number(new URL(proxy.url).port));
    const events: ExportEvent[] = [];
    // The proxy comes back once a probe has found it still away; the waits between probes pass on
    // a clock that skips them.
    const clock = skippingClock();
    let back = false;
    try {
      const run = exportAccount({
        out: join(await tempDir(), 'outage.zip'),
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        concurrency: 3,
        proxy: { httpProxy: `http://alice:${SECRET}@127.0.0.1:${front.port}` },
        outage: { maxProbeDelayMs: 500 },
        now: clock.now,
        sleep: clock.sleep,
        onEvent: (event) => {
          events.push(event);
          if (event.type !== 'outage' || event.state !== 'probe' || back) return;
          back = true;
          void front.up();
        },
      });
      await afterRequests(30);
      await front.down();
      const result = await run;
      expect(result.complete).toBe(true);
      expect(result.errorCount).toBe(0);
      expect(result.outages).toMatchObject({ count: 1, gaveUp: false });
      const outages = events.flatMap((event) => (event.type === 'outage' ? [event] : []));
      expect(outages[0]).toMatchObject({ state: 'started', reason: 'unreachable' });
      expect(outages.at(-1)).toMatchObject({ state: 'back' });
      expect(JSON.stringify(events)).not.toContain(SECRET);
      // The start names the proxy, host and port only, so a pause can say the proxy may be the one away.
      expect(events.find((event) => event.type === 'start')).toMatchObject({ proxy: `127.0.0.1:${front.port}` });
      const line = outageLine(outages[0] as OutageEvent, outages[0]?.since ?? 0, `127.0.0.1:${front.port}`);
      expect(line).toMatch(new RegExp(`^service unreachable through the proxy 127\\.0\\.0\\.1:${front.port} since `));
    } finally {
      await front.close();
    }
  }, 30_000);

  it('without patience, what the run records names the proxy that went away, never its credentials', async () => {
    const front = await relay(Number(new URL(proxy.url).port));
    try {
      const out = join(await tempDir(), 'gone.zip');
      const run = exportAccount({
        out,
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        proxy: { httpProxy: `http://alice:${SECRET}@127.0.0.1:${front.port}` },
        outagePatienceMs: 0,
        retry: { attempts: 1 },
      });
      await afterRequests(30);
      await front.down();
      const result = await run;
      expect(result.complete).toBe(false);
      const { manifest } = await readArchive(out);
      const failures = manifest.errors.filter((error) => error.code === 'NETWORK');
      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures) expect(failure.message).toContain(`the proxy 127.0.0.1:${front.port}`);
      expect(failures.map((failure) => failure.message)).toContainEqual(
        expect.stringContaining(`the proxy 127.0.0.1:${front.port} refused the connection`),
      );
      expect(JSON.stringify(manifest)).not.toContain(SECRET);
    } finally {
      await front.close();
    }
  });
});
