import { connect } from 'node:net';
import { request } from 'undici';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { readArchive } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';

/** One raw HTTP/1.1 exchange, so the Host header is exactly what a rebound page's browser would send. */
function rawGet(
  port: number,
  host: string | undefined,
  path = '/',
  cookie?: string,
): Promise<{ status: number; head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]), head, body: all.subarray(split + 4) });
    });
    const hostLine = host === undefined ? '' : `Host: ${host}\r\n`;
    const cookieLine = cookie === undefined ? '' : `Cookie: ${cookie}\r\n`;
    socket.write(
      `GET ${path} HTTP/1.${host === undefined ? '0' : '1'}\r\n${hostLine}${cookieLine}Connection: close\r\n\r\n`,
    );
  });
}

let server: ArchiveServer;
let port: number;
let prefix: string;
let index: Buffer;

beforeAll(async () => {
  const service = await startFakeService({ seed: 1 });
  const out = join(await tempDir('rabbit-view-host-'), 'a.zip');
  try {
    await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly], formats: new Set(['json']) });
  } finally {
    await service.close();
  }
  index = (await readArchive(out)).entries.get('index.html')?.data ?? Buffer.alloc(0);
  server = await serveArchive(out);
  port = Number(new URL(server.url).port);
  prefix = new URL(server.url).pathname;
});
afterAll(async () => {
  await server.close();
});

describe('view answers only to its own name', () => {
  it.each(['127.0.0.1:PORT', 'localhost:PORT', 'LOCALHOST:PORT', '[::1]:PORT'])('serves Host %s', async (host) => {
    const response = await rawGet(port, host.replace('PORT', String(port)), prefix);
    expect(response.status).toBe(200);
    expect(response.head.toLowerCase()).toContain('content-security-policy:');
    expect(response.body.equals(index)).toBe(true);
  });

  it.each([
    'evil.example:PORT',
    'evil.example',
    '127.0.0.1',
    '127.0.0.1:1',
    'localhost.evil.example:PORT',
    '127.0.0.1:PORT.evil.example',
    undefined,
  ])('refuses Host %s with no archive byte', async (host) => {
    for (const path of ['/', '/index.html', '/manifest.json', prefix, `${prefix}manifest.json`]) {
      const response = await rawGet(port, host?.replace('PORT', String(port)), path);
      expect(response.status).toBe(421);
      expect(response.body.toString('latin1')).not.toContain('<html');
      expect(response.body.length).toBeLessThan(100);
    }
  });

  it('listens on loopback only', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/);
  });
});

describe('view serves only whoever holds the address it printed', () => {
  const HOST = (): string => `127.0.0.1:${port}`;

  it.each(['/', '/index.html', '/manifest.json', '/assets/', `/${'A'.repeat(43)}/index.html`, '/x/../index.html'])(
    'refuses %s without the token, with no archive byte',
    async (path) => {
      const response = await rawGet(port, HOST(), path);
      expect(response.status).toBe(403);
      expect(response.body.toString('latin1')).not.toContain('<html');
      expect(response.head.toLowerCase()).not.toContain('set-cookie');
    },
  );

  it('lets the token in by its path only, and sets no cookie: every port of the host would be sent it', async () => {
    const first = await rawGet(port, HOST(), `${prefix}index.html`);
    expect(first.status).toBe(200);
    expect(first.body.equals(index)).toBe(true);
    expect(first.head.toLowerCase()).not.toContain('set-cookie');
    // What keeps the token in the path from another origin: a link followed from a page sends no Referer.
    expect(first.head.toLowerCase()).toContain('referrer-policy: no-referrer');
  });

  it('refuses what a browser would send to another port: a cookie holding the token, as curl would replay it', async () => {
    // The cookie an older `view` set. A browser sends a host's cookies to all its ports, so a server
    // on any other port of 127.0.0.1 is sent it too; whoever reads it there must get nothing.
    const token = prefix.slice(1, -1);
    const origin = `http://127.0.0.1:${port}`;
    for (const cookie of [`rabbit_view_${port}=${token}`, `rabbit_view=${token}`, `token=${token}`, token])
      for (const path of ['/', '/index.html', '/manifest.json', '/_search?q=a']) {
        const response = await request(`${origin}${path}`, { headers: { cookie } });
        const body = await response.body.text();
        expect(response.statusCode, `${cookie} ${path}`).toBe(403);
        expect(body).not.toContain('<html');
        expect(body).not.toContain('"prototypes"');
      }
  });
});
