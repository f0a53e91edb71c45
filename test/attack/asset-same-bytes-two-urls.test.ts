import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// Page assets are stored by their bytes and type (assets/SHA256.EXT), so two URLs that serve the
// same bytes as the same kind of file make one entry name. A service in front of the fake one adds
// such pairs to every page: the same bytes as image/png under two paths, as two types no table
// lists (both `bin`), and as `constructor` and `__proto__` (since today also `bin`). A page that
// names one icon by two URLs is no attack at all, so the export must finish with one entry for
// both, not stop with DUPLICATE_ENTRY and leave no archive for every other prototype.

const PAIRS: Record<string, string> = {
  png: '<img src="/rabbit/static/same/1.png"><img src="/rabbit/static/same/2.png">',
  unlisted: '<img src="/rabbit/static/type/x-foo"><img src="/rabbit/static/type/x-bar">',
  'prototype names': '<img src="/rabbit/static/type/constructor"><img src="/rabbit/static/type/__proto__">',
};

let service: FakeService;
const fronts: Server[] = [];

/** A front that adds `extra` to every page rendering and answers the asset paths itself. */
async function front(extra: string): Promise<string> {
  const upstream = new URL(service.baseUrl);
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/rabbit/static/same/')) {
      res.writeHead(200, { 'content-type': 'image/png' }).end('the same bytes');
      return;
    }
    if (url.startsWith('/rabbit/static/type/')) {
      const type = url.slice('/rabbit/static/type/'.length);
      res.writeHead(200, { 'content-type': type.startsWith('x-') ? `application/${type}` : type }).end('same');
      return;
    }
    const headers = { ...req.headers, host: upstream.host, 'accept-encoding': 'identity' };
    const upstreamRequest = request(new URL(url, upstream), { method: req.method, headers }, (answer) => {
      if (!/\/pages\/[^/]+\.html$/.test(url.split('?')[0] ?? '')) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1').replace('</body>', `${extra}</body>`);
        const { 'content-length': _length, etag: _etag, ...rest } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, rest).end(Buffer.from(body, 'latin1'));
      });
    });
    req.pipe(upstreamRequest);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fronts.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
});

afterAll(async () => {
  for (const server of fronts) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await service.close();
});

describe('two asset URLs serving the same bytes as the same kind of file', () => {
  it.each(Object.keys(PAIRS))(
    '%s: the export finishes, with one entry for both',
    async (pair) => {
      const baseUrl = await front(PAIRS[pair] as string);
      const out = join(await tempDir(), 'team.zip');
      const run = await runCli(['export', '--base-url', baseUrl, '--out', out], {
        env: { RABBIT_API_KEY: service.keys.readOnly },
      });
      expect(run.stderr).not.toMatch(/DUPLICATE|twice/);
      expect(run.code, run.stderr).toBe(0);
      const { manifest, entries } = await readArchive(out);
      const assets = manifest.files.filter((file) => file.path.startsWith('assets/'));
      expect(new Set(assets.map((file) => file.path)).size).toBe(assets.length);
      for (const file of assets) expect(entries.has(file.path)).toBe(true);
    },
    60_000,
  );
});
