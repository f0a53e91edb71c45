import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { runCli } from '../helpers/cli.js';
import { walkService } from '../helpers/oracle.js';
import { tempDir } from '../helpers/temp.js';
import { startConnectProxy, type TestProxy } from './connect-proxy.js';
import { expectArchiveMatches } from '../helpers/exact.js';
import { makeTestCa, startTlsFront, type TestCa, type TlsFront } from './tls-front.js';

// The built CLI in a child process: NODE_EXTRA_CA_CERTS is read only when a process starts, and a
// proxy must be what the process's own environment names. The one run refused before it connects
// anywhere goes in-process, through the export command's registration, with the same environment.
const BASE = 'https://rabbit.test';
const SECRET = 'pr0xy-s3cret';

let service: FakeService;
let ca: TestCa;
let front: TlsFront;
let proxy: TestProxy;
let caDir: string;

// One private CA for the file (three runs of openssl): each test's service, TLS end and proxy are
// its own, and nothing a test does changes the CA. Not tempDir(), which is emptied after each test.
beforeAll(async () => {
  caDir = await mkdtemp(join(tmpdir(), 'rabbit-proxy-ca-'));
  ca = makeTestCa(caDir, 'rabbit.test');
});
afterAll(async () => {
  await rm(caDir, { recursive: true, force: true });
});

beforeEach(async () => {
  service = await startFakeService({ seed: 1, advertisedBaseUrl: BASE });
  front = await startTlsFront(ca, Number(new URL(service.baseUrl).port));
  proxy = await startConnectProxy({ hosts: { 'rabbit.test': front.port }, credentials: `alice:${SECRET}` });
});
afterEach(async () => {
  await proxy.close();
  await front.close();
  await service.close();
});

const withCredentials = (url: string, password = SECRET): string => url.replace('http://', `http://alice:${password}@`);

describe('export behind a proxy', () => {
  it('reaches https://rabbit.test only through the CONNECT proxy, trusts NODE_EXTRA_CA_CERTS, and archives every body exactly', async () => {
    const out = join(await tempDir(), 'proxied.zip');
    const run = await runCli(['export', '--out', out, '--base-url', BASE, '--concurrency', '4', '--json'], {
      env: {
        RABBIT_API_KEY: service.keys.readOnly,
        HTTPS_PROXY: withCredentials(proxy.url),
        NODE_EXTRA_CA_CERTS: ca.caFile,
      },
    });
    expect(run.code, run.stderr).toBe(0);
    const requests = service.stats.requests;
    const served = await walkService(service.baseUrl, service.keys.readOnly);
    const manifest = await expectArchiveMatches(out, served);
    expect(manifest.complete).toBe(true);

    // Every connection the service's TLS end accepted came out of the proxy; nothing went around it.
    expect(front.remotePorts.length).toBeGreaterThan(0);
    for (const port of front.remotePorts) expect(proxy.upstreamPorts.has(port)).toBe(true);
    expect(proxy.tunnels.every((target) => target === 'rabbit.test:443')).toBe(true);
    expect(proxy.plain).toEqual([]);
    // The same keep-alive pool as without a proxy: at most one tunnel per connection, reused.
    expect(proxy.tunnels.length).toBeLessThanOrEqual(4);
    expect(requests).toBe(served.size);
    // The proxy was asked with the credentials from the URL, and they appear in no output.
    expect(
      proxy.authorizations.every((value) => value === `Basic ${Buffer.from(`alice:${SECRET}`).toString('base64')}`),
    ).toBe(true);
    expect(run.stdout + run.stderr).not.toContain(SECRET);
    expect(run.stdout + run.stderr).not.toContain(service.keys.readOnly);
  });

  it('an https:// proxy is verified with the same private CA, and tunnels TLS to the service inside its own', async () => {
    const secure = await startConnectProxy({
      hosts: { 'rabbit.test': front.port },
      tls: { key: ca.key, cert: ca.cert },
    });
    try {
      const out = join(await tempDir(), 'secure-proxy.zip');
      const run = await runCli(['export', '--out', out, '--base-url', BASE, '--formats', 'json', '--quiet'], {
        env: {
          RABBIT_API_KEY: service.keys.readOnly,
          HTTPS_PROXY: secure.url,
          NODE_EXTRA_CA_CERTS: ca.caFile,
        },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(secure.tunnels.length).toBeGreaterThan(0);
      for (const port of front.remotePorts) expect(secure.upstreamPorts.has(port)).toBe(true);
    } finally {
      await secure.close();
    }
  });

  it('lowercase https_proxy works the same; without the private CA the service certificate is refused', async () => {
    const out = join(await tempDir(), 'untrusted.zip');
    const run = await runCli(['export', '--out', out, '--base-url', BASE, '--retries', '1'], {
      env: {
        RABBIT_API_KEY: service.keys.readOnly,
        https_proxy: withCredentials(proxy.url),
      },
    });
    expect(run.code).toBe(1);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(service.stats.requests).toBe(0);
    expect(run.stderr).not.toContain(SECRET);
  });

  it('never prints the proxy credentials when the proxy refuses them', async () => {
    const wrong = 'wr0ng-passw0rd';
    const run = await runCli(
      ['export', '--out', join(await tempDir(), 'x.zip'), '--base-url', BASE, '--retries', '1'],
      {
        env: {
          RABBIT_API_KEY: service.keys.readOnly,
          HTTPS_PROXY: withCredentials(proxy.url, wrong),
          NODE_EXTRA_CA_CERTS: ca.caFile,
          RABBIT_DEBUG: '1',
        },
      },
    );
    expect(run.code).toBe(1);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(service.stats.requests).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(wrong);
  });

  it('NO_PROXY sends a matching host around the proxy', async () => {
    const out = join(await tempDir(), 'direct.zip');
    // The JSON bodies alone: where the requests go is the point, not how many kinds they fetch.
    const run = await runCli(['export', '--out', out, '--base-url', service.baseUrl, '--formats', 'json', '--quiet'], {
      env: {
        RABBIT_API_KEY: service.keys.readOnly,
        HTTP_PROXY: proxy.url,
        HTTPS_PROXY: proxy.url,
        NO_PROXY: 'example.org, 127.0.0.1',
      },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.tunnels).toEqual([]);
    expect(proxy.plain).toEqual([]);
    expect(service.stats.requests).toBeGreaterThan(0);
  });

  it('refuses an http:// base URL to a host that is not loopback before any request, naming --allow-insecure-http', async () => {
    const dir = await tempDir();
    const run = await runCli(['export', '--out', join(dir, 'x.zip'), '--base-url', 'http://rabbit.test'], {
      register: registerExport,
      env: {
        RABBIT_API_KEY: service.keys.readOnly,
        HTTP_PROXY: proxy.url,
        HTTPS_PROXY: proxy.url,
      },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--allow-insecure-http');
    expect(proxy.tunnels).toEqual([]);
    expect(proxy.plain).toEqual([]);
    expect(service.stats.requests).toBe(0);
  });
});
