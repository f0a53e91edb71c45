import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { obtainBody, type BodyCache, type CacheCandidate } from '../../src/crawl/obtain-body.js';
import { DEFAULT_SIZE_CAPS } from '../../src/client/size-caps.js';
import { bufferChunks } from '../../src/core/read-chunks.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { cachedBodyOf } from '../../src/storage/stored-file.js';
import { useFakeService } from '../helpers/fake-service.js';
import { testFetchContext } from './fetch-context.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const PNG = '/rabbit/api/prototypes/3/pages/page0001.png';

/**
 * The PNG obtained under a png cap of `cap`, with a copy of it in the cache (fresh or to revalidate)
 * or none: what came of it (the body's size and origin, or the error's code and message), whether
 * the copy was read, and how many requests the service saw.
 */
async function obtain(cap: number, copy: 'fresh' | 'stale' | 'none') {
  const { ctx: fetch, close } = await testFetchContext(service.baseUrl, join(dir, `spool-${copy}-${cap}`));
  const spool = fetch.spool;
  const served = await globalThis.fetch(`${service.baseUrl}${PNG}?api_key=${service.keys.readOnly}`);
  const bytes = Buffer.from(await served.arrayBuffer());
  const lastModified = served.headers.get('last-modified');
  const key = service.keys.readOnly;
  const proto = { id: '3', key, revision: 1, lastModification: 1 };
  let loads = 0;
  const candidate: CacheCandidate = {
    fresh: copy === 'fresh',
    lastModified,
    origin: 'prev.zip',
    size: bytes.length,
    async load() {
      loads += 1;
      const body = await spool.write(bufferChunks(bytes), { maxBytes: bytes.length, source: PNG });
      return cachedBodyOf(body, { contentType: 'image/png', lastModified });
    },
  };
  const cache: BodyCache = { lookup: () => Promise.resolve(copy === 'none' ? undefined : candidate) };
  service.stats.reset();
  try {
    const outcome = await obtainBody({ fetch, cache, caps: { ...DEFAULT_SIZE_CAPS, png: cap } }, proto, PNG, 'png', key)
      .then(({ result }) => ({ size: result.size, reused: result.reused }))
      .catch((error: { code: string; message: string }) => ({ code: error.code, message: error.message }));
    return { outcome, loads, requests: service.stats.requests, size: bytes.length };
  } finally {
    await close();
  }
}

describe('obtainBody and the size cap', () => {
  it('uses a copy at the cap, and leaves one past it unread: the request refuses it as without a copy', async () => {
    const { size } = await obtain(DEFAULT_SIZE_CAPS.png, 'none');
    const atCap = await obtain(size, 'fresh');
    expect(atCap).toMatchObject({ outcome: { size, reused: 'prev.zip' }, loads: 1, requests: 0 });

    const without = await obtain(size - 1, 'none');
    expect(without.outcome).toMatchObject({ code: 'BODY_TOO_LARGE' });
    for (const copy of ['fresh', 'stale'] as const) {
      const over = await obtain(size - 1, copy);
      expect(over, copy).toEqual({ ...without, loads: 0 });
    }
  });
});
