import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import type { DatasetOptions, FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { crawl } from './helpers.js';

/**
 * The data is generated lazily, a page at a time, yet must stay what the eager generator served:
 * these digests were taken from a crawl of the eager generator (before the lazy one existed).
 * Status and body are digested (lastModification is in the JSON); the service's own address is not.
 */
const GOLDEN: Array<[number, Partial<DatasetOptions>, number, string]> = [
  [1, {}, 192, 'b7fe042e4a54ad612fdc27a576daf0c9364147d45870e38a4e0b98e6fe667116'],
  [5, { prototypes: 3, pagesPerPrototype: 7, elementsPerPage: 9, layersPerPrototype: 3, elementsPerLayer: 4, discussionsPerPrototype: 5 }, 453, '7fbaf594c536e0a68e23177a37e211e614c1b15430ef2305ec3d8d7738ee1cb9'],
  [2, { prototypes: 2, pagesPerPrototype: 0 }, 106, '77dc0adc05377f523291b487c7a0d406468377071e39ad3f9889efe84a1ad68f'],
];

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

async function digestOf(s: FakeService): Promise<{ count: number; digest: string }> {
  const bodies = await crawl(s);
  const hash = createHash('sha256');
  for (const path of [...bodies.keys()].sort()) {
    const { status, body } = bodies.get(path)!;
    hash.update(`${path}\0${status}\0`).update(body.toString('latin1').split(s.baseUrl).join('BASE')).update('\0');
  }
  return { count: bodies.size, digest: hash.digest('hex') };
}

describe('lazily generated data', () => {
  test.each(GOLDEN)('seed %i, dataset %j: the same bytes as the eager generator', async (seed, dataset, count, digest) => {
    service = await startFakeService({ seed, dataset });
    expect(await digestOf(service)).toEqual({ count, digest });
  });
});
