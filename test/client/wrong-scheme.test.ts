import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/until.js';
import { requireTool } from '../convert/tools.js';
import { startConnectProxy, type TestProxy } from './connect-proxy.js';
import { makeTestCa, startTlsFront, type TestCa, type TlsFront } from './tls-front.js';

// A URL whose scheme does not fit the port: https:// to a plain HTTP port (the fake service, the
// demo), http:// to a TLS port (nginx, a Node TLS server, one that answers with a TLS alert), and
// an https:// proxy URL for a proxy that takes plain HTTP. Each is named in words with the URL to
// write instead; OpenSSL's and the HTTP parser's own texts never reach the user.

let service: FakeService;
let ca: TestCa;
let tls: TlsFront;
let plainProxy: TestProxy;
const servers: Server[] = [];
const sockets = new Set<Socket>();
let nginx: ChildProcess | undefined;

const PROXY_SECRET = 'pr0xy-s3cret';
/** What OpenSSL and undici say in their own words. */
const RAW_WORDS = /wrong version number|ssl3_get_record|SSL routines|0A00010B|openssl|Expected HTTP|HPE_|UND_ERR/i;

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  ca = makeTestCa(await tempDir(), 'rabbit.test');
  tls = await startTlsFront(ca, Number(new URL(service.baseUrl).port));
  plainProxy = await startConnectProxy();
});

afterAll(async () => {
  nginx?.kill('SIGQUIT');
  for (const socket of sockets) socket.destroy();
  await Promise.all([
    service.close(),
    tls.close(),
    plainProxy.close(),
    ...servers.map((server) => new Promise((resolve) => server.close(resolve))),
  ]);
});

interface Failure {
  code: string;
  next?: string;
  message: string;
  exitCode: number | null;
  output: string;
}

async function exportFails(baseUrl: string, env: NodeJS.ProcessEnv = {}): Promise<Failure> {
  const dir = await tempDir();
  const run = await runCli(
    ['export', '--out', join(dir, 'out.zip'), '--json', '--retries', '1', '--base-url', baseUrl],
    {
      register: registerExport,
      env: { RABBIT_API_KEY: service.keys.readOnly, ...env },
    },
  );
  const line = run.stdout.trim().split('\n').pop() ?? '{}';
  const error = (JSON.parse(line) as { error?: Omit<Failure, 'exitCode' | 'output'> }).error;
  if (error === undefined) throw new Error(`no error line in ${run.stdout}\n${run.stderr}`);
  return { ...error, exitCode: run.code, output: `${run.stdout}\n${run.stderr}` };
}

/** A loopback server that answers every connection with `bytes` and closes it. */
async function answering(bytes: Buffer): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.end(bytes);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** nginx with TLS on a loopback port, as most services run behind it. */
async function startNginx(): Promise<number> {
  const bin = requireTool('/usr/sbin/nginx', 'nginx-light');
  const dir = await tempDir();
  const port = await freePort();
  await writeFile(join(dir, 'key.pem'), ca.key);
  await writeFile(join(dir, 'cert.pem'), ca.cert);
  const conf = join(dir, 'nginx.conf');
  await writeFile(
    conf,
    [
      `daemon off; master_process off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;`,
      'events {}',
      `http { access_log off; client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir};`,
      `  uwsgi_temp_path ${dir}; scgi_temp_path ${dir};`,
      `  server { listen 127.0.0.1:${port} ssl; ssl_certificate ${dir}/cert.pem; ssl_certificate_key ${dir}/key.pem;`,
      '    location / { return 200 "[]"; } } }',
    ].join('\n'),
  );
  nginx = spawn(bin, ['-c', conf, '-p', dir], { stdio: 'ignore' });
  // Up once the port can no longer be taken.
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = createServer().listen(port, '127.0.0.1');
        socket.once('listening', () => socket.close(() => resolve(false)));
        socket.once('error', () => resolve(true));
      }),
    { what: 'nginx listening', timeoutMs: 10_000, intervalMs: 50 },
  );
  return port;
}

function expectNamed(failure: Failure, words: string, next: string): void {
  expect(failure.code).toBe('WRONG_SCHEME');
  expect(failure.exitCode).toBe(1);
  expect(failure.message).toContain(words);
  expect(failure.next).toContain(next);
  expect(failure.output).not.toMatch(RAW_WORDS);
  expect(failure.output).not.toContain(service.keys.readOnly);
}

describe('a scheme that does not fit the port', () => {
  it('https:// to the plain HTTP port of the service: names it, and says to write http://', async () => {
    const { host } = new URL(service.baseUrl);
    const failure = await exportFails(`https://${host}`);
    expectNamed(failure, `${host} answers in plain HTTP, not HTTPS`, `--base-url http://${host}`);
    expect(failure.message).toContain(`(GET https://${host}/rabbit/api/prototypes.json)`);
  });

  it('keeps the path of the base URL in the URL it suggests', async () => {
    const { host } = new URL(service.baseUrl);
    const failure = await exportFails(`https://${host}/rabbit/api/`);
    expect(failure.next).toContain(`--base-url http://${host}`);
    expect(failure.next).not.toContain('/rabbit');
  });

  it('https:// through a proxy to a plain port: the service is named, not the proxy', async () => {
    const { host } = new URL(service.baseUrl);
    const failure = await exportFails(`https://${host}`, { HTTPS_PROXY: plainProxy.url });
    expectNamed(failure, `${host} answers in plain HTTP`, `--base-url http://${host}`);
    expect(plainProxy.tunnels).toContain(host);
  });

  it('an https:// proxy URL for a proxy that takes plain HTTP: the proxy is named, never its password', async () => {
    const { port } = new URL(plainProxy.url);
    const failure = await exportFails(`https://127.0.0.1:${tls.port}`, {
      HTTPS_PROXY: `https://alice:${PROXY_SECRET}@127.0.0.1:${port}`,
    });
    expectNamed(failure, `the proxy 127.0.0.1:${port} answers in plain HTTP`, 'write HTTPS_PROXY with http://');
    expect(failure.output).not.toContain(PROXY_SECRET);
    expect(failure.output).not.toContain('alice');
  });

  it('http:// to a Node TLS server (it closes without a word): names it, and says to write https://', async () => {
    const failure = await exportFails(`http://127.0.0.1:${tls.port}`);
    expectNamed(failure, `127.0.0.1:${tls.port} speaks HTTPS (TLS)`, `--base-url https://127.0.0.1:${tls.port}`);
  });

  it('http:// to nginx on its TLS port (it answers 400): names it, and says to write https://', async () => {
    const port = await startNginx();
    const failure = await exportFails(`http://127.0.0.1:${port}`);
    expectNamed(failure, `127.0.0.1:${port} speaks HTTPS (TLS)`, `--base-url https://127.0.0.1:${port}`);
  });

  it('http:// to a server that answers with a TLS alert record: named from the first bytes of the answer', async () => {
    // A TLS 1.2 alert, fatal, protocol_version: what many TLS stacks send to a plain request.
    const port = await answering(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]));
    const failure = await exportFails(`http://127.0.0.1:${port}`);
    expectNamed(failure, `127.0.0.1:${port} speaks HTTPS (TLS)`, `--base-url https://127.0.0.1:${port}`);
  });

  it('a plain server that cuts connections off is still only unreachable', async () => {
    const port = await answering(Buffer.alloc(0));
    const failure = await exportFails(`http://127.0.0.1:${port}`);
    expect(failure.code).toBe('HOST_UNREACHABLE');
  });
});
