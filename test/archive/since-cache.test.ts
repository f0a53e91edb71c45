import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { openSinceCache } from '../../src/archive/since-cache.js';
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
  it('serves every prototype on demand in any order and cleans up its spill on close', async () => {
    const path = await writeSampleArchive(dir);
    const spills = join(dir, 'spills');
    await rm(spills, { recursive: true, force: true });
    await mkdir(spills);
    const spool = new Spool(join(dir, 'spool'));
    await spool.init();
    const cache = await openSinceCache(path, spool, { spillDir: spills });
    try {
      expect(cache.prototypes).toBe(2);
      expect(await readdir(spills)).toHaveLength(1);
      // Alternating between prototypes (and a third that PREV lacks) more often than are held at once.
      for (const id of ['4711', '12', '999', '4711', '12', '4711']) {
        // Only sources inside the prototype stand in for requests (its own metadata is always fetched).
        const own = (sampleFiles().byPrototype[id]?.files ?? []).filter((f) =>
          f.source.startsWith(`/rabbit/api/prototypes/${id}/`),
        );
        const files =
          own.length > 0 ? own : [{ source: `/rabbit/api/prototypes/${id}/pages.json`, body: Buffer.alloc(0) }];
        for (const file of files) {
          const candidate = await cache.lookup(file.source, id === '999' ? { ...context('12'), id } : context(id));
          const body = await candidate?.load();
          // An unknown prototype finds nothing; a known one, its own bodies, fresh.
          const found =
            id === '999'
              ? undefined
              : { fresh: true, sha256: createHash('sha256').update(file.body).digest('hex'), size: file.body.length };
          expect(candidate && { fresh: candidate.fresh, sha256: body?.sha256, size: body?.size }, file.source).toEqual(
            found,
          );
        }
      }
      // A source of another prototype is never served from this one.
      expect(await cache.lookup('/rabbit/api/prototypes/12/pages.json', context('4711'))).toBeUndefined();
    } finally {
      cache.close();
      await spool.close();
    }
    expect(await readdir(spills)).toEqual([]);
    // Closed early (the export closes it when the crawl ends) and again at the end: a lookup after
    // that finds nothing rather than reading a closed file, and a second close is harmless.
    const own = sampleFiles().byPrototype['4711']?.files.find((f) =>
      f.source.startsWith('/rabbit/api/prototypes/4711/'),
    );
    expect(own).toBeDefined();
    expect(await cache.lookup(own?.source ?? '', context('4711'))).toBeUndefined();
    expect(() => cache.close()).not.toThrow();
  });

  it('offers only entries with the size the zip holds, the first listing winning', async () => {
    const manifest = sampleManifest();
    const files = manifest.prototypes['4711']?.revisions['17']?.files ?? [];
    const at = (suffix: string) => {
      const entry = files.find((file) => file.path.endsWith(suffix));
      if (!entry) throw new Error(`no ${suffix}`);
      return entry;
    };
    // The zip holds another size than the manifest lists.
    at('/element9.json').size += 1;
    // Served fields come back as listed: a long content type, no Last-Modified.
    const long = `application/json; profile="${'x'.repeat(400)}"`;
    Object.assign(at('/discussions/88.json'), { contentType: long, lastModified: null });
    // A source listed twice: the first listing is the one offered.
    files.push({ ...at('/layers.json'), lastModified: 'Thu, 01 Jan 2099 00:00:00 GMT' });
    const path = await writeSampleArchive(dir, { manifest });
    const spool = new Spool(join(dir, 'spool'));
    await spool.init();
    const cache = await openSinceCache(path, spool, { spillDir: dir });
    try {
      const api = '/rabbit/api/prototypes/4711';
      expect(await cache.lookup(`${api}/pages/page0001/elements/element9.json`, context('4711'))).toBeUndefined();
      const discussion = await cache.lookup(`${api}/discussions/88.json`, context('4711'));
      expect(discussion?.lastModified).toBeNull();
      const loaded = await discussion?.load();
      expect(loaded?.contentType).toBe(long);
      expect(loaded?.sha256).toBe(at('/discussions/88.json').sha256);
      expect((await cache.lookup(`${api}/layers.json`, context('4711')))?.lastModified).toBe(
        'Wed, 31 May 2023 10:00:00 GMT',
      );
      // A changed prototype's copy without Last-Modified cannot be revalidated, so it is not offered.
      expect(await cache.lookup(`${api}/discussions/88.json`, { ...context('4711'), revision: 18 })).toBeUndefined();
      expect((await cache.lookup(`${api}/layers.json`, { ...context('4711'), revision: 18 }))?.fresh).toBe(false);
      expect((await cache.lookup('/rabbit/api/prototypes/12/pages.json', context('12')))?.fresh).toBe(true);
    } finally {
      cache.close();
      await spool.close();
    }
  });

  it('refuses an archive listing an entry at a path other than the one its source has under its revision', async () => {
    const manifest = sampleManifest();
    const pages = manifest.prototypes['4711']?.revisions['17']?.files.find((file) => file.path.endsWith('/pages.json'));
    if (!pages) throw new Error('no pages.json');
    pages.path = 'prototypes/4711/r17/layers.json';
    const path = await writeSampleArchive(dir, { manifest });
    const error = await openSinceCache(path, new Spool(join(dir, 'spool')), { spillDir: dir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'USAGE')).toBe(true);
  });

  it('refuses an archive whose manifest is not one as a usage error, leaving no spill behind', async () => {
    const path = await writeSampleArchive(dir, {
      manifest: '{"formatVersion":1,"prototypes":{"1":{"revisions":{"1":{"files":[{"path":1}]}}}}}',
    });
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
