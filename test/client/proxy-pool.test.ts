import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { isRabbitError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/temp.js';
import { startConnectProxy, type TestProxy } from './connect-proxy.js';

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
        timeoutMs: 1000,
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
});
