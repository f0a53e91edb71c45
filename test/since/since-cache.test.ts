import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { openSinceCache } from '../../src/export/since-cache.js';
import { Spool } from '../../src/storage/spool.js';
import { tempDir } from '../helpers/temp.js';
import { sampleFiles, sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('since-cache-');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const context = (id: string) => {
  const record = sampleManifest().prototypes[id];
  if (!record) throw new Error(`no prototype ${id} in the sample`);
  return { id, key: 'k', revision: record.revision, lastModification: record.lastModification };
};

describe('openSinceCache', () => {
  it('spills each prototype apart, serves every prototype on demand and cleans up on close', async () => {
    const path = await writeSampleArchive(dir);
    const spills = join(dir, 'spills');
    await rm(spills, { recursive: true, force: true });
    await mkdir(spills);
    const spool = new Spool(join(dir, 'spool'));
    await spool.init();
    const cache = await openSinceCache(path, spool, { spillDir: spills });
    try {
      expect(cache.prototypes).toBe(2);
      const [work] = await readdir(spills);
      expect((await readdir(join(spills, work as string))).length).toBe(2);
      // Alternating between prototypes (and a third that PREV lacks) more often than are held at once.
      for (const id of ['4711', '12', '999', '4711', '12', '4711']) {
        // Only sources inside the prototype stand in for requests (its own metadata is always fetched).
        const own = (sampleFiles().byPrototype[id]?.files ?? []).filter((f) => f.source.startsWith(`/rabbit/api/prototypes/${id}/`));
        const files = own.length > 0 ? own : [{ source: `/rabbit/api/prototypes/${id}/pages.json`, body: Buffer.alloc(0) }];
        for (const file of files) {
          const candidate = await cache.lookup(file.source, id === '999' ? { ...context('12'), id } : context(id));
          if (id === '999') {
            expect(candidate).toBeUndefined();
            continue;
          }
          expect(candidate?.fresh, file.source).toBe(true);
          const body = await candidate?.load();
          expect(body?.sha256, file.source).toBe(createHash('sha256').update(file.body).digest('hex'));
          expect(body?.size, file.source).toBe(file.body.length);
        }
      }
      // A source of another prototype is never served from this one.
      expect(await cache.lookup('/rabbit/api/prototypes/12/pages.json', context('4711'))).toBeUndefined();
    } finally {
      cache.close();
      await spool.close();
    }
    expect(await readdir(spills)).toEqual([]);
  });

  it('refuses an archive whose manifest is not one as a usage error, leaving no spill behind', async () => {
    const path = await writeSampleArchive(dir, { manifest: '{"formatVersion":1,"prototypes":{"1":{"revisions":{"1":{"files":[{"path":1}]}}}}}' });
    const spills = join(dir, 'spills');
    await mkdir(spills);
    const error = await openSinceCache(path, new Spool(join(dir, 'spool')), { spillDir: spills }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'USAGE')).toBe(true);
    expect(await readdir(spills)).toEqual([]);
  });
});
