import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countExportRequests,
  datasetForResources,
  startFakeService,
  STATIC_PATHS,
  type FakeService,
} from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { allFileEntries, type Manifest } from '../../src/manifest/types.js';
import { servedEntries } from '../helpers/oracle.js';
import { tempDir } from '../helpers/temp.js';
import { python } from '../helpers/tools.js';

/*
 * Issue 9: an account of more than 20,000 resources, exported and checked byte for byte (by
 * SHA-256) against an independent walk. Memory and time are the bench's business (npm run bench --
 * --scale), not this test's.
 */

/**
 * Every entry of the archive as Python's zipfile reads it (a reader we did not write, which checks
 * each entry's CRC-32): its SHA-256 and size, by name, and manifest.json, which it writes beside the
 * archive. One process reads them all: 20,000 entries through a zip reader in this worker took
 * seconds of its CPU, and so did the 10 MiB manifest through a pipe.
 */
async function entriesByPython(zip: string): Promise<{ manifest: Manifest; entries: Map<string, [string, number]> }> {
  const script = [
    'import hashlib, json, sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1]) as z:',
    '    entries = {}',
    '    for info in z.infolist():',
    '        if info.filename in entries: sys.exit(info.filename + " twice")',
    '        data = z.read(info)',
    '        entries[info.filename] = [hashlib.sha256(data).hexdigest(), len(data)]',
    '        if info.filename == "manifest.json": open(sys.argv[2], "wb").write(data)',
    // json.dumps, not json.dump: dump encodes in chunks in Python rather than in C, a fifth of the script's CPU.
    '    sys.stdout.write(json.dumps(entries))',
  ].join('\n');
  const manifestPath = `${zip}.manifest.json`;
  const { stdout } = await promisify(execFile)(python(), ['-c', script, zip, manifestPath], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
  return { manifest, entries: new Map(Object.entries(JSON.parse(stdout) as Record<string, [string, number]>)) };
}

/**
 * One GET through the pool's own dispatch: the body's SHA-256 and size as its chunks come, and the
 * body itself only when `keep` (a list to follow). Without the stream and promises of
 * `pool.request` around each answer, 20,000 of them take a good part less of this worker's CPU.
 */
function get(pool: Pool, path: string, keep: boolean): Promise<{ digest: string; size: number; body?: Buffer }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let status = 0;
    let size = 0;
    pool.dispatch(
      { path, method: 'GET' },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_controller, statusCode) => {
          status = statusCode;
        },
        onResponseData: (_controller, chunk) => {
          hash.update(chunk);
          size += chunk.length;
          if (keep) chunks.push(chunk);
        },
        onResponseEnd: () => {
          if (status !== 200) reject(new Error(`walk: ${path} answered ${status}`));
          else resolve({ digest: hash.digest('hex'), size, ...(keep ? { body: Buffer.concat(chunks) } : {}) });
        },
        onResponseError: (_controller, error) => reject(error),
      },
    );
  });
}

/**
 * The oracle's walk (test/helpers/oracle.ts), with requests in flight side by side so 20,000 of
 * them take seconds: lists are followed as they arrive, every body's SHA-256 and size are kept by
 * its path (the bodies themselves, some 20,000 buffers held to the end, cost the collector more
 * than hashing them as they come). A plain undici Pool, not the global fetch: nock's interceptors
 * would make each request much dearer.
 */
async function walkConcurrently(baseUrl: string, key: string, width = 16): Promise<Map<string, [string, number]>> {
  const bodies = new Map<string, [string, number]>();
  const queue: Array<[string, ((body: Buffer) => void) | undefined]> = [];
  const ids = (body: Buffer): string[] => {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    return (Array.isArray(value) ? value : Object.keys(value as object)).map(String);
  };
  const list = (source: string, each: (id: string) => void): void => {
    queue.push([source, (body) => ids(body).forEach(each)]);
  };
  const api = '/rabbit/api';
  list(`${api}/prototypes.json`, (proto) => {
    const p = `${api}/prototypes/${proto}`;
    queue.push([`${p}.json`, undefined]);
    const discussions = new Set<string>();
    const discussion = (d: string): void => {
      if (!discussions.has(d)) queue.push([`${p}/discussions/${d}.json`, undefined]);
      discussions.add(d);
    };
    list(`${p}/discussions.json`, discussion);
    list(`${p}/pages.json`, (page) => {
      for (const format of ['json', 'html', 'png']) queue.push([`${p}/pages/${page}.${format}`, undefined]);
      list(`${p}/pages/${page}/elements.json`, (element) =>
        queue.push([`${p}/pages/${page}/elements/${element}.json`, undefined]),
      );
      list(`${p}/pages/${page}/discussions.json`, discussion);
    });
    list(`${p}/layers.json`, (layer) => {
      queue.push([`${p}/layers/${layer}.json`, undefined]);
      list(`${p}/layers/${layer}/elements.json`, (element) =>
        queue.push([`${p}/layers/${layer}/elements/${element}.json`, undefined]),
      );
    });
  });
  for (const path of Object.values(STATIC_PATHS)) queue.push([path, undefined]);
  const pool = new Pool(baseUrl, { connections: width });
  let running = 0;
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      // An index, not queue.shift(): shifting a queue of thousands, once a request, was most of this loop's time.
      while (running < width && next < queue.length) {
        const [source, then] = queue[next++]!;
        running++;
        const query = source.startsWith(api) ? `?api_key=${encodeURIComponent(key)}` : '';
        get(pool, `${source}${query}`, then !== undefined)
          .then(({ digest, size, body }) => {
            bodies.set(source, [digest, size]);
            if (then !== undefined && body !== undefined) then(body);
            running--;
            if (running === 0 && next === queue.length) resolve();
            else pump();
          })
          .catch(reject);
      }
    };
    pump();
  }).finally(() => pool.close());
  return bodies;
}

describe('a large account', () => {
  let service: FakeService;
  beforeAll(async () => {
    // Nothing here reads the requests counted by path.
    service = await startFakeService({ seed: 9, dataset: datasetForResources(20_000), countPaths: false });
  });
  afterAll(() => service.close());

  it('exports more than 20,000 resources, every one byte for byte', async () => {
    const resources = countExportRequests(service.store);
    expect(resources).toBeGreaterThanOrEqual(20_000);
    const out = join(await tempDir(), 'large.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      concurrency: 16,
    });
    expect(result.complete).toBe(true);

    // Python reads the archive in its own process while this one walks the service.
    const [served, { manifest, entries }] = await Promise.all([
      walkConcurrently(service.baseUrl, service.keys.readOnly),
      entriesByPython(out),
    ]);
    expect(served.size).toBe(resources);
    expect(manifest.complete).toBe(true);
    expect(manifest.errors).toEqual([]);
    const files = servedEntries(allFileEntries(manifest));
    expect(files).toHaveLength(served.size);
    expect(new Set(files.map((file) => file.source))).toEqual(new Set(served.keys()));
    let differing = 0;
    for (const file of files) {
      const [digest, length] = served.get(file.source)!;
      const [stored, size] = entries.get(file.path) ?? [];
      // One assertion for the lot: 20,000 expect() calls would dominate the test's time.
      if (stored !== digest || size !== length || file.sha256 !== digest || file.size !== length) differing++;
    }
    expect(differing).toBe(0);
  }, 300_000);
});
