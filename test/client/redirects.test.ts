import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, STATIC_PATHS } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { MAX_REDIRECTS } from '../../src/client/redirects.js';
import { walkService } from '../helpers/oracle.js';
import { tempDir } from '../helpers/temp.js';
import { expectArchiveMatches } from '../helpers/exact.js';

type Rule = (url: URL) => { status: number; location: string };

interface Front {
  baseUrl: string;
  seen: URL[];
  server: Server;
}

/** The fake service behind a front that answers some paths with redirects and forwards the rest. */
async function startFront(rules: Map<string, Rule>, backend: () => string): Promise<Front> {
  const seen: URL[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://front');
    seen.push(url);
    const rule = rules.get(url.pathname);
    if (rule) {
      const { status, location } = rule(url);
      res.writeHead(status, { location, 'content-type': 'text/html' }).end('<a>moved</a>');
      return;
    }
    const path = url.pathname.replace(/^\/moved/, '');
    request(`${backend()}${path}${url.search}`)
      .then(async (answer) => {
        res.writeHead(answer.statusCode, answer.headers as Record<string, string>);
        for await (const chunk of answer.body) res.write(chunk);
        res.end();
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

async function startRecorder(): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200).end('elsewhere');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});
const closeServer = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

describe('redirects', () => {
  it('never takes the key to another origin, follows same-origin redirects a bounded number of times, and records the rest', async () => {
    const rules = new Map<string, Rule>();
    const backend = { url: '' };
    const front = await startFront(rules, () => backend.url);
    closers.push(closeServer(front.server));
    // The service names the front as its own address, so its pages' absolute links stay on-site.
    const service = await startFakeService({ seed: 1, advertisedBaseUrl: front.baseUrl });
    backend.url = service.baseUrl;
    closers.push(() => service.close());
    const other = await startRecorder();
    closers.push(closeServer(other.server));
    const key = service.keys.readOnly;
    const served = await walkService(service.baseUrl, key);
    const sources = [...served.keys()];
    const png = sources.find((source) => source.endsWith('.png')) as string;
    const [moved, looping] = sources.filter((source) => /\/pages\/[^/]+\.json$/.test(source));
    if (!moved || !looping) throw new Error('the sample has too few pages');

    // Elsewhere, echoing the key in the Location as a careless server might.
    rules.set(png, (url) => ({
      status: 302,
      location: `${other.url}/catch?api_key=${url.searchParams.get('api_key') ?? ''}`,
    }));
    rules.set(moved, (url) => ({
      status: 301,
      location: `/moved${moved}?api_key=${url.searchParams.get('api_key') ?? ''}&v=1`,
    }));
    rules.set(looping, () => ({ status: 307, location: looping }));
    // A page requisite (fetched without the key) is held to the same rule.
    const logo = STATIC_PATHS.logo;
    rules.set(logo, () => ({ status: 302, location: `${other.url}/logo.png` }));

    const out = join(await tempDir(), 'redirected.zip');
    const result = await exportAccount({ out, baseUrl: front.baseUrl, keys: [key], concurrency: 4 });
    expect(result.complete).toBe(false);

    expect(other.seen).toEqual([]);
    const manifest = await expectArchiveMatches(out, served, new Set([png, looping, logo]));
    expect(manifest.errors.map((error) => [error.source, error.code, error.status]).sort()).toEqual(
      [
        [png, 'HTTP_STATUS', 302],
        [looping, 'HTTP_STATUS', 307],
        [logo, 'HTTP_STATUS', 302],
      ].sort(),
    );
    const offsite = manifest.errors.find((error) => error.source === png);
    expect(offsite?.message).toContain(`${other.url}/catch`);
    expect(JSON.stringify(manifest)).not.toContain(key);

    // The followed hop carried the key once, not the echoed one as well.
    const hop = front.seen.find((url) => url.pathname === `/moved${moved}`);
    expect(hop?.searchParams.getAll('api_key')).toEqual([key]);
    expect(hop?.searchParams.get('v')).toBe('1');
    // A redirect to itself is followed MAX_REDIRECTS times, then given up (retries do not apply).
    expect(front.seen.filter((url) => url.pathname === looping)).toHaveLength(MAX_REDIRECTS + 1);
  });
});
