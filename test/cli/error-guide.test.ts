import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { registerServe } from '../../src/cli/commands/serve.js';
import { ERROR_GUIDE, nextStepFor } from '../../src/cli/error-guide.js';
import { isRabbitError, RabbitError, type ErrorCode } from '../../src/core/errors.js';
import { EXPORT_DEFAULTS, exportAccount } from '../../src/export/export-account.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { plainZip } from '../helpers/plain-zip.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';
import { makeTestCa, startTlsFront, type TlsFront } from '../client/tls-front.js';

let service: FakeService;
let tls: TlsFront;
const servers: Server[] = [];
const sockets = new Set<Socket>();

/** A loopback server that does `onSocket` with every connection; closed after the file. */
async function rawServer(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const port = await rawServer((socket) => socket.destroy());
  await new Promise((resolve) => servers.pop()?.close(resolve));
  return port;
}

/** A proxy that answers every CONNECT with `status` and opens no tunnel. */
async function proxyAnswering(status: number): Promise<number> {
  const server = createHttpServer((_req, res) => res.writeHead(status).end());
  server.on('connect', (_req, client: Socket) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.end(`HTTP/1.1 ${status} Not Today\r\nProxy-Authenticate: Basic realm="corp"\r\nContent-Length: 0\r\n\r\n`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The proxy's password, which no output may hold. */
const PROXY_SECRET = 'pr0xy-s3cret';

/** `export` of the TLS front through the proxy on `port`, its credentials in HTTPS_PROXY. */
function exportThroughProxy(port: number): Promise<Failure> {
  return exportFails(['--base-url', `https://127.0.0.1:${tls.port}`], {
    RABBIT_API_KEY: service.keys.readOnly,
    HTTPS_PROXY: `http://alice:${PROXY_SECRET}@127.0.0.1:${port}`,
  });
}

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  tls = await startTlsFront(makeTestCa(await tempDir(), 'rabbit.test'), Number(new URL(service.baseUrl).port));
});

afterAll(async () => {
  await service.close();
  await tls.close();
  for (const socket of sockets) socket.destroy();
  const held = servers.splice(0);
  await Promise.all(
    held.map((server) => {
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

interface Failure {
  code: string;
  next?: string;
  message: string;
  stderr: string;
  exitCode: number | null;
}

/** `export --json` in-process with a key from the environment: the error line it prints. */
async function exportFails(args: string[], env: NodeJS.ProcessEnv = { RABBIT_API_KEY: service.keys.readOnly }) {
  const dir = await tempDir();
  const run = await runCli(['export', '--out', join(dir, 'out.zip'), '--json', '--retries', '1', ...args], {
    register: registerExport,
    env,
  });
  return failureOf(run);
}

function failureOf(run: { code: number | null; stdout: string; stderr: string }): Failure {
  const line = run.stdout.trim().split('\n').pop() ?? '{}';
  const error = (JSON.parse(line) as { error?: { code: string; next?: string; message: string } }).error;
  if (error === undefined) throw new Error(`no error line in ${run.stdout}\n${run.stderr}`);
  return { ...error, stderr: run.stderr, exitCode: run.code };
}

/** The core alone, for failures the CLI cannot be steered into without the network. */
async function coreFails(options: Partial<Parameters<typeof exportAccount>[0]>): Promise<Failure> {
  try {
    await exportAccount({
      out: join(await tempDir(), 'out.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      retry: { attempts: 1 },
      ...options,
    });
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    const next = nextStepFor(error);
    return { code: error.code, message: error.message, stderr: '', exitCode: null, ...(next ? { next } : {}) };
  }
  throw new Error('the export did not fail');
}

/**
 * An export of a host that takes the connection and never answers, with the first contact's limit
 * (the default) on a skipping clock: the limit's time passes at once when the host has taken the
 * connection, instead of on the wall.
 */
async function silentHost(options: Partial<Parameters<typeof exportAccount>[0]> = {}): Promise<Failure> {
  const clock = skippingClock();
  const port = await rawServer(() => clock.skip(EXPORT_DEFAULTS.firstContactMs));
  return coreFails({
    baseUrl: `http://127.0.0.1:${port}`,
    now: clock.now,
    sleep: clock.sleep,
    timer: clock.timer,
    ...options,
  });
}

/** Every row of the guide, and a real way to meet it. */
const CASES: Record<string, () => Promise<Failure>> = {
  CONNECTION_REFUSED: async () => exportFails(['--base-url', `http://127.0.0.1:${await closedPort()}`]),
  PROXY_REFUSED: async () => exportThroughProxy(await closedPort()),
  PROXY_AUTH: async () => exportThroughProxy(await proxyAnswering(407)),
  PROXY_FAILED: async () => exportThroughProxy(await proxyAnswering(403)),
  HOST_NOT_FOUND: () =>
    // A resolver that knows no names: undici's real connect path, without asking any DNS server.
    coreFails({
      baseUrl: 'https://rabbit.invalid',
      dispatcher: new Agent({
        connect: {
          lookup: (host, _options, callback) =>
            callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), '', 4),
        },
      }),
    }),
  TLS_CERTIFICATE: () => exportFails(['--base-url', `https://127.0.0.1:${tls.port}`]),
  // The demo and the fake service speak plain HTTP: https:// to them meets OpenSSL, not a service.
  WRONG_SCHEME: () => exportFails(['--base-url', `https://${new URL(service.baseUrl).host}`]),
  NO_ANSWER: () => silentHost({ retry: { attempts: 5 } }),
  HOST_UNREACHABLE: async () => {
    const port = await rawServer((socket) => socket.destroy());
    return exportFails(['--base-url', `http://127.0.0.1:${port}`]);
  },
  API_NOT_FOUND: () => exportFails(['--base-url', `${service.baseUrl}/somewhere-else`]),
  BAD_BASE_URL: () => exportFails(['--base-url', new URL(service.baseUrl).host]),
  API_KEY_FLAG: () => exportFails(['--api-key', 'abc', '--base-url', service.baseUrl]),
  KEY_FILE: async () => exportFails(['--api-key-file', join(await tempDir(), 'no-such-key.txt')]),
  NO_API_KEY: () => exportFails(['--base-url', service.baseUrl], {}),
  NO_SUCH_PROTOTYPE: () => exportFails(['--base-url', service.baseUrl, '--prototype', '999']),
  KEY_REFUSED: () => exportFails(['--base-url', service.baseUrl], { RABBIT_API_KEY: service.keys.invalid }),
  LOCKED: async () => {
    // The output's lock held by a process that is alive (this one): another export to it must wait.
    const dir = await tempDir();
    const work = join(dir, '.team.zip.rabbit-work');
    await mkdir(work, { mode: 0o700 });
    const holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    await writeFile(join(work, 'lock'), JSON.stringify(holder), { mode: 0o600 });
    return exportFails(['--base-url', service.baseUrl, '--out', join(dir, 'team.zip')]);
  },
  // A usage error the core knows the way out of (restore given a page's name where its id goes,
  // refused before the archive is read).
  USAGE: async () =>
    failureOf(
      await runCli(['restore', join(await tempDir(), 'team.zip'), '--prototype', '3', '--page', 'Home', '--json'], {
        register: registerRestore,
        env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
      }),
    ),
  // restore's --journal naming a file that is not a journal: the journal is appended to, and would destroy it.
  NOT_A_JOURNAL: async () => {
    const dir = await tempDir();
    const archive = join(dir, 'team.zip');
    await exportAccount({
      out: archive,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      prototypes: new Set(['1001']),
      formats: new Set(['json']),
    });
    await writeFile(join(dir, 'notes.txt'), 'what to restore tomorrow\n');
    return failureOf(
      await runCli(['restore', archive, '--prototype', '1001', '--journal', join(dir, 'notes.txt'), '--json'], {
        register: registerRestore,
        env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
      }),
    );
  },
  PORT_IN_USE: async () => {
    const busy = Number(new URL(service.baseUrl).port);
    return failureOf(await runCli(['serve', '--port', String(busy), '--json'], { register: registerServe, env: {} }));
  },
  OUTPUT_EXISTS: async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'team.zip'), 'earlier');
    return exportFails(['--base-url', service.baseUrl, '--out', join(dir, 'team.zip')]);
  },
  // A zip that holds no manifest.json, and one cut short: test/cli/damaged-archive-steps.test.ts has the rest.
  ARCHIVE_CORRUPT: async () => {
    const archive = join(await tempDir(), 'team.zip');
    await writeFile(archive, plainZip([{ name: 'notes.txt', data: Buffer.from('not an export\n') }]));
    return failureOf(await runCli(['ls', archive, '--json'], { register: registerLs }));
  },
  NOT_A_ZIP: async () => {
    const archive = join(await tempDir(), 'team.zip');
    await writeFile(archive, plainZip([{ name: 'notes.txt', data: Buffer.from('not an export\n') }]).subarray(0, 40));
    return failureOf(await runCli(['ls', archive, '--json'], { register: registerLs }));
  },
  // A folder that exists and takes no new files, even from root.
  OUTPUT_UNWRITABLE: () => exportFails(['--base-url', service.baseUrl, '--out', '/proc/team.zip']),
  OUTPUT_PARENT_MISSING: async () =>
    exportFails(['--base-url', service.baseUrl, '--out', join(await tempDir(), 'missing', 'team.zip')]),
  OUTPUT_KIND: async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'team.zip'));
    return exportFails(['--base-url', service.baseUrl, '--out', join(dir, 'team.zip')]);
  },
  UNSAFE_PATH: async () => {
    // A work folder beside the output that any user may write to (as one planted by another would be).
    const dir = await tempDir();
    await mkdir(join(dir, '.team.zip.rabbit-work'));
    await chmod(join(dir, '.team.zip.rabbit-work'), 0o777);
    return exportFails(['--base-url', service.baseUrl, '--out', join(dir, 'team.zip')]);
  },
};

describe('error guide: every failure a newcomer meets says what happened, what was tried, and what next', () => {
  it('has a real case for every row of the table, and a row for every case', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(ERROR_GUIDE).sort());
  });

  it.each(Object.keys(CASES))('%s', async (code) => {
    const failure = await (CASES[code] as () => Promise<Failure>)();
    expect(failure.code).toBe(code);
    expect(failure.next).toBe(nextStepFor(new RabbitError(code as ErrorCode, '', { data: { ...failure } })));
    expect(failure.next?.length).toBeGreaterThan(20);
    // The human form, for a failure met through the CLI (one the core alone meets has none): the
    // message, then the next step on its own line.
    const humanFormOk = failure.exitCode === null || failure.stderr.includes(`\nnext: ${failure.next}\n`);
    expect(humanFormOk, failure.stderr).toBe(true);
    // No raw system codes in what the user reads.
    expect(failure.message).not.toMatch(/\b(ENOENT|EADDRINUSE|UND_ERR_\w+)\b/);
    // Never the key, in any case.
    for (const key of [service.keys.readOnly, service.keys.invalid, 'abc', PROXY_SECRET])
      expect(`${failure.message} ${failure.next} ${failure.stderr}`).not.toContain(key);
  });

  it('a lock held by a live run: the step is to wait for it, naming it, not to run the same command now', async () => {
    const failure = await (CASES['LOCKED'] as () => Promise<Failure>)();
    expect(failure.next).toBe(
      `wait until process ${process.pid} on ${hostname()} has ended (it holds the lock), then run the command again`,
    );
  });

  it('a symbolic link at --out: the step is another path, not "a file" (--force never replaces a link)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'real.zip'), 'mine');
    await symlink(join(dir, 'real.zip'), join(dir, 'team.zip'));
    const failure = await exportFails(['--base-url', service.baseUrl, '--out', join(dir, 'team.zip'), '--force']);
    expect(failure.code).toBe('OUTPUT_KIND');
    expect(failure.next).toBe('choose another path: --force replaces a regular file only, never a symbolic link');
  });

  it('names the URL that was tried, key removed, for failures of the first contact', async () => {
    const failure = await exportFails(['--base-url', `${service.baseUrl}/somewhere-else`]);
    expect(failure.message).toContain(`${service.baseUrl}/somewhere-else/rabbit/api/prototypes.json`);
    expect(failure.message).not.toContain('api_key');
  });

  it.each([
    ['PROXY_REFUSED', closedPort, 'refused the connection'],
    ['PROXY_AUTH', () => proxyAnswering(407), 'answered 407 to CONNECT: it did not accept the credentials in its URL'],
    ['PROXY_FAILED', () => proxyAnswering(403), 'answered 403 to CONNECT: no tunnel to the service'],
  ])(
    '%s at the first request names the proxy by host:port, not the service, and ends the run',
    async (code, start, said) => {
      const port = await start();
      const failure = await exportThroughProxy(port);
      expect(failure.code).toBe(code);
      expect(failure.exitCode).toBe(1);
      expect(failure.message).toContain(`the proxy 127.0.0.1:${port} ${said}`);
      expect(failure.message).toContain(`(GET https://127.0.0.1:${tls.port}/rabbit/api/prototypes.json)`);
      expect(failure.message).not.toContain('alice');
      expect(failure.next).toMatch(/HTTPS_PROXY/);
    },
  );

  it('a 407 to a proxy URL without credentials says that they are missing', async () => {
    const port = await proxyAnswering(407);
    const failure = await exportFails(['--base-url', `https://127.0.0.1:${tls.port}`], {
      RABBIT_API_KEY: service.keys.readOnly,
      HTTPS_PROXY: `127.0.0.1:${port}`,
    });
    expect(failure.code).toBe('PROXY_AUTH');
    expect(failure.message).toContain(
      `the proxy 127.0.0.1:${port} answered 407 to CONNECT: it asks for credentials, and its URL has none`,
    );
    expect(failure.next).toContain('user:pass@host:port after the http:// of HTTPS_PROXY');
  });

  it("a connection cut inside the tunnel stays the service's failure, said to have gone through the proxy", async () => {
    const port = await rawServer((socket) =>
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        socket.destroy();
      }),
    );
    const failure = await exportFails(['--base-url', `https://127.0.0.1:${tls.port}`], {
      RABBIT_API_KEY: service.keys.readOnly,
      HTTPS_PROXY: `http://127.0.0.1:${port}`,
    });
    expect(failure.code).toBe('HOST_UNREACHABLE');
    expect(failure.message).toContain(`the connection to the service through the proxy 127.0.0.1:${port} failed`);
  });

  it('gives up on a silent host at the first contact and says how long it waited', async () => {
    const failure = await silentHost();
    expect(failure.code).toBe('NO_ANSWER');
    const seconds = EXPORT_DEFAULTS.firstContactMs / 1000;
    expect(failure.message).toMatch(
      new RegExp(`within ${seconds} s \\(GET http://127\\.0\\.0\\.1:\\d+/rabbit/api/prototypes\\.json\\)`),
    );
  });

  it('refuses --api-key first, whether or not a key is also in the environment or a file', async () => {
    // The newcomer who has no key set anywhere yet is the one who types --api-key: the answer
    // must be where a key goes, not "no API key".
    for (const env of [{}, { RABBIT_API_KEY: service.keys.readOnly }]) {
      const failure = await exportFails(['--api-key', 'abc', '--base-url', service.baseUrl], env);
      expect(failure.code).toBe('API_KEY_FLAG');
    }
    const failure = await exportFails([
      '--api-key',
      'abc',
      '--base-url',
      service.baseUrl,
      '--api-key-file',
      join(await tempDir(), 'none.txt'),
    ]);
    expect(failure.code).toBe('API_KEY_FLAG');
  });

  it.each([
    ['127.0.0.1:44303', 'http://127.0.0.1:44303'],
    ['localhost:44303', 'http://localhost:44303'],
    ['[::1]:44303/rabbit', 'http://[::1]:44303/rabbit'],
    ['example.org:8443', 'https://example.org:8443'],
    ['127.0.0.1.example.org:8443', 'https://127.0.0.1.example.org:8443'],
  ])('suggests %s with the scheme its host most likely speaks: %s', async (written, suggested) => {
    const failure = await exportFails(['--base-url', written]);
    expect(failure.code).toBe('BAD_BASE_URL');
    expect(failure.next).toBe(`write it with its scheme: --base-url ${suggested}`);
  });

  it('the http:// it suggests for loopback is what the fake service answers on', async () => {
    const dir = await tempDir();
    const written = new URL(service.baseUrl).host;
    const failure = await exportFails(['--base-url', written]);
    const suggested = /--base-url (\S+)/.exec(failure.next ?? '')?.[1] ?? '';
    const run = await runCli(['export', '--out', join(dir, 'a.zip'), '--base-url', suggested], {
      register: registerExport,
      env: { RABBIT_API_KEY: service.keys.readOnly },
    });
    expect(run.code).toBe(0);
  });

  it('https:// to a plain port of a host that is not loopback: http:// is offered only with its cost', () => {
    const next = nextStepFor(
      new RabbitError('WRONG_SCHEME', '', {
        data: { target: 'service', suggestion: 'http://rabbit.example:8080', insecure: 'yes' },
      }),
    );
    expect(next).toContain("use the service's https:// address if it has one");
    expect(next).toContain('--base-url http://rabbit.example:8080 --allow-insecure-http');
    expect(next).toContain('clear text');
  });

  it('a bad key among several is named by its line, and no command that would fail again is offered alone', async () => {
    const dir = await tempDir();
    const keys = join(dir, 'keys.txt');
    await writeFile(keys, `# team keys\n${service.keys.invalid}\n${service.keys.readOnly}\n`);
    const run = await runCli(
      ['export', '--out', join(dir, 'k.zip'), '--base-url', service.baseUrl, '--api-key-file', keys],
      { register: registerExport, env: {} },
    );
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`the API key on line 2 of ${keys} was refused: fix or remove it`);
    expect(run.stderr).not.toContain('to fetch only what is missing');
    expect(run.stderr).not.toContain(service.keys.invalid);
  });

  it('names a bad key in RABBIT_API_KEY by its position', async () => {
    const dir = await tempDir();
    const run = await runCli(['export', '--out', join(dir, 'k.zip'), '--base-url', service.baseUrl], {
      register: registerExport,
      env: { RABBIT_API_KEY: `${service.keys.readOnly},${service.keys.invalid}` },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('the API key on entry 2 of RABBIT_API_KEY was refused');
  });

  it.each(['/', '/rabbit', '/rabbit/', '/rabbit/api', '/rabbit/api/'])(
    'accepts the base URL with the path %s',
    async (path) => {
      const dir = await tempDir();
      const run = await runCli(['export', '--out', join(dir, 'a.zip'), '--base-url', `${service.baseUrl}${path}`], {
        register: registerExport,
        env: { RABBIT_API_KEY: service.keys.readOnly },
      });
      expect(run.stderr).not.toContain('rabbit-export:');
      expect(run.code).toBe(0);
      // Says which address it used when that is not the one written.
      expect(run.stderr.includes(`(API at ${service.baseUrl}/rabbit/api/)`), run.stderr).toBe(
        path.startsWith('/rabbit'),
      );
    },
  );
});
