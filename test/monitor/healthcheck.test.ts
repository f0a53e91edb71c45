import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { BACKUP_LOCK } from '../../src/backup/backup-account.js';
import { acquireLock } from '../../src/storage/lock.js';
import { ping, pingUrl } from '../../src/monitor/healthcheck.js';
import { startMonitor } from '../../src/cli/run-monitor.js';
import type { CliIO } from '../../src/cli/run.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { join } from 'node:path';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

interface Ping {
  method: string;
  path: string;
  body: string;
}

/** A healthchecks.io stand-in on loopback: records every ping, answers 200 "OK" (or as `reply` says). */
let pings: Ping[];
let monitor: Server;
let base: string;
let reply: (request: IncomingMessage) => number | 'hang';
const hanging = new Set<Socket>();

beforeEach(async () => {
  pings = [];
  reply = () => 200;
  monitor = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      pings.push({ method: request.method ?? '', path: request.url ?? '', body });
      const status = reply(request);
      if (status === 'hang') return; // never answers
      response.writeHead(status).end('OK');
    });
  });
  monitor.on('connection', (socket) => {
    hanging.add(socket);
    socket.on('close', () => hanging.delete(socket));
  });
  await new Promise<void>((resolve) => monitor.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(monitor.address() as AddressInfo).port}/ping/5f3c`;
});

afterEach(async () => {
  for (const socket of hanging) socket.destroy();
  await new Promise((resolve) => monitor.close(resolve));
});

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

describe('--healthcheck-url', () => {
  it('pings /start, then the URL itself with the JSON summary as body, and never sends the key', async () => {
    const run = await runCli(['backup', '--dir', dir, '--json', '--healthcheck-url', base], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(0);
    expect(pings.map((p) => `${p.method} ${p.path}`)).toEqual(['POST /ping/5f3c/start', 'POST /ping/5f3c']);
    const body = JSON.parse(pings[1]?.body ?? '') as Record<string, unknown>;
    // The body is exactly the summary line the log gets.
    expect(body).toEqual(JSON.parse(run.stdout));
    expect(body).toMatchObject({ type: 'summary', ok: true, exitCode: 0, complete: true });
    expect(JSON.parse(pings[0]?.body ?? '')).toMatchObject({ type: 'start' });
    for (const p of pings) {
      expect(p.body).not.toContain(service.keys.readOnly);
      expect(p.body).not.toContain(Buffer.from(service.keys.readOnly).toString('base64'));
      expect(p.path).not.toContain(service.keys.readOnly);
    }
    expect(run.stderr).toBe('');
  });

  it('pings /<exit code> when a run is incomplete (3) or fails (1), failures before the export included', async () => {
    service.setFaults({ paths: [{ path: '/rabbit/api/prototypes/3.json', kind: '404' }] });
    const incomplete = await runCli(['export', '--out', join(dir, 'x.zip'), '--quiet', '--healthcheck-url', base], {
      register: registerExport,
      env: env(),
    });
    expect(incomplete.code).toBe(3);
    expect(pings.map((p) => p.path)).toEqual(['/ping/5f3c/start', '/ping/5f3c/3']);
    expect(JSON.parse(pings[1]?.body ?? '')).toMatchObject({ ok: false, exitCode: 3, complete: false, errors: 1 });

    pings = [];
    const held = await acquireLock(join(dir, BACKUP_LOCK), 'test');
    try {
      const locked = await runCli(['backup', '--dir', dir, '--quiet', '--healthcheck-url', base], {
        register: registerBackup,
        env: env(),
      });
      expect(locked.code).toBe(1);
    } finally {
      await held.release();
    }
    expect(pings.map((p) => p.path)).toEqual(['/ping/5f3c/start', '/ping/5f3c/1']);
    expect(JSON.parse(pings[1]?.body ?? '')).toMatchObject({ ok: false, exitCode: 1, error: { code: 'LOCKED' } });

    pings = [];
    const noKey = await runCli(['backup', '--dir', dir, '--healthcheck-url', `${base}/`], {
      register: registerBackup,
      env: { RABBIT_BASE_URL: service.baseUrl },
    });
    expect(noKey.code).toBe(2);
    expect(pings.map((p) => p.path)).toEqual(['/ping/5f3c/start', '/ping/5f3c/2']);
  });

  it('a ping endpoint that refuses connections is a warning; the backup still succeeds', async () => {
    const closed = await new Promise<string>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(`http://127.0.0.1:${port}/ping/dead`));
      });
    });
    // The waits between the ping's attempts pass on the run's clock, which skips them.
    const run = await runCli(['backup', '--dir', dir, '--json', '--healthcheck-url', closed], {
      register: registerBackup,
      env: env(),
      clock: skippingClock(),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, complete: true });
    expect(run.stderr).toMatch(/warning: the healthcheck ping \(start\) to 127\.0\.0\.1:\d+ failed after 3 attempts/);
    expect(run.stderr).toMatch(/warning: the healthcheck ping \(success\) .* failed/);
    expect((await readdir(dir)).filter((name) => name.endsWith('.zip'))).toHaveLength(1);
  });

  it('a ping endpoint that never answers times out, is retried a couple of times, and does not throw', async () => {
    reply = () => 'hang';
    const outcome = await ping(base, 'start', '{}', { timeoutMs: 150, retries: 2, retryDelayMs: 10 });
    expect(outcome).toEqual({ ok: false, reason: 'no answer within 0.15 s', attempts: 3 });
    expect(pings).toHaveLength(3);

    // As the CLI uses it: the run's end is reported, the failure only written to stderr.
    pings = [];
    const err: string[] = [];
    const io = {
      stdout: { write: () => true },
      stderr: { write: (text: string) => err.push(text) > 0 },
      env: {},
    } as unknown as CliIO;
    const watch = await startMonitor(io, { healthcheckUrl: base }, () => ({ name: 'dir', value: dir }), {
      timeoutMs: 150,
      retries: 1,
      retryDelayMs: 10,
    });
    await expect(watch.finish({ type: 'summary', ok: true, exitCode: 0 }, 0)).resolves.toBeUndefined();
    expect(pings.map((p) => p.path)).toEqual(['/ping/5f3c/start', '/ping/5f3c/start', '/ping/5f3c', '/ping/5f3c']);
    expect(err.join('')).toMatch(/ping \(start\).*no answer within 0\.15 s[\s\S]*ping \(success\).*no answer/);
  });

  it('retries a 5xx, not a 4xx', async () => {
    let calls = 0;
    reply = () => (++calls === 1 ? 503 : 200);
    expect(await ping(base, 'success', '{}', { retryDelayMs: 1 })).toEqual({ ok: true, status: 200 });
    reply = () => 404;
    expect(await ping(base, { exitCode: 3 }, '{}', { retryDelayMs: 1 })).toEqual({
      ok: false,
      reason: 'HTTP 404',
      attempts: 1,
    });
    expect(pings.map((p) => p.path)).toEqual(['/ping/5f3c', '/ping/5f3c', '/ping/5f3c/3']);
  });

  it.each([
    ['https://hc-ping.com/uuid', 'start', 'https://hc-ping.com/uuid/start'],
    ['https://hc-ping.com/uuid/', { exitCode: 3 }, 'https://hc-ping.com/uuid/3'],
    ['https://hc-ping.com/uuid?x=1', 'success', 'https://hc-ping.com/uuid?x=1'],
    ['http://kuma.local:3001/ping/key?x=1', { exitCode: 0 }, 'http://kuma.local:3001/ping/key?x=1'],
    ['https://hc-ping.com/uuid?x=1', { exitCode: 1 }, 'https://hc-ping.com/uuid/1?x=1'],
  ] as const)('%s pinged as %o goes to %s', (url, kind, expected) => {
    expect(pingUrl(url, kind)).toBe(expected);
  });

  it('refuses a URL that is not http(s) as a usage error', async () => {
    const run = await runCli(['backup', '--dir', dir, '--healthcheck-url', 'ftp://x/y'], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(2);
    expect(pings).toEqual([]);
  });
});
