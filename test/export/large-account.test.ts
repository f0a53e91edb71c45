import { createHash } from 'node:crypto';
import { join } from 'node:path';
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
import { allFileEntries } from '../../src/manifest/types.js';
import { servedEntries } from '../helpers/oracle.js';
import { readArchive } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 9: an account of more than 20,000 resources, exported and checked byte for byte against
 * an independent walk. Memory and time are the bench's business (npm run bench -- --scale), not
 * this test's.
 */
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * The oracle's walk (test/helpers/oracle.ts), with requests in flight side by side so 20,000 of
 * them take seconds: lists are followed as they arrive, every body is kept by its path. A plain
 * undici Pool, not the global fetch: nock's interceptors would make each request much dearer.
 */
async function walkConcurrently(baseUrl: string, key: string, width = 16): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
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
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      while (running < width && queue.length > 0) {
        const [source, then] = queue.shift()!;
        running++;
        const query = source.startsWith(api) ? `?api_key=${encodeURIComponent(key)}` : '';
        pool
          .request({ path: `${source}${query}`, method: 'GET' })
          .then(async (response) => {
            if (response.statusCode !== 200) throw new Error(`walk: ${source} answered ${response.statusCode}`);
            const body = Buffer.from(await response.body.arrayBuffer());
            bodies.set(source, body);
            then?.(body);
            running--;
            if (running === 0 && queue.length === 0) resolve();
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
    service = await startFakeService({ seed: 9, dataset: datasetForResources(20_000) });
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

    const served = await walkConcurrently(service.baseUrl, service.keys.readOnly);
    expect(served.size).toBe(resources);
    const { manifest, entries } = await readArchive(out);
    expect(manifest.complete).toBe(true);
    expect(manifest.errors).toEqual([]);
    const files = servedEntries(allFileEntries(manifest));
    expect(files).toHaveLength(served.size);
    expect(new Set(files.map((file) => file.source))).toEqual(new Set(served.keys()));
    let differing = 0;
    for (const file of files) {
      const body = served.get(file.source)!;
      const data = entries.get(file.path)?.data;
      // One assertion for the lot: 20,000 expect() calls would dominate the test's time.
      if (data === undefined || !data.equals(body) || file.sha256 !== sha256(body) || file.size !== body.length)
        differing++;
    }
    expect(differing).toBe(0);
  }, 300_000);
});
