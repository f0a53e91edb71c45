import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openArchive } from '../../src/archive/open-archive.js';
import type { RabbitError } from '../../src/core/errors.js';
import { sampleFiles, sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'open-archive-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const failure = (promise: Promise<unknown>): Promise<RabbitError> =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: RabbitError) => error,
  );

async function names(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const name of iterable) out.push(name);
  return out;
}

describe('openArchive', () => {
  it("catalogs every prototype's recorded revision and reads its bodies back checked", async () => {
    const archive = await openArchive(await writeSampleArchive(dir));
    const catalog = await archive.catalog();
    try {
      expect(catalog.head.tool.name).toBe('rabbit-export');
      expect(catalog.prototypeIds()).toEqual(['12', '4711']);
      const { byPrototype } = sampleFiles();
      for (const id of catalog.prototypeIds()) {
        const prototype = catalog.prototype(id);
        const expected = byPrototype[id];
        if (prototype === undefined || expected === undefined) throw new Error(`no prototype ${id}`);
        expect(prototype).toMatchObject({ id, revision: expected.revision, hasRevision: true });
        const prefix = `prototypes/${id}/r${expected.revision}/`;
        expect(await names(prototype.names())).toEqual(expected.files.map((file) => file.path.slice(prefix.length)));
        expect(prototype.entries).toBe(expected.files.length);
        for (const file of expected.files) {
          const rest = file.path.slice(prefix.length);
          expect(prototype.has(rest)).toBe(true);
          expect(await prototype.entry(rest)).toMatchObject({
            path: file.path,
            source: file.source,
            size: file.body.length,
          });
          expect(await prototype.read(rest, 1 << 20)).toEqual(file.body);
        }
        expect(prototype.has('nothing.json')).toBe(false);
        expect(await prototype.read('nothing.json', 1 << 20)).toBeUndefined();
      }
      expect(catalog.prototype('99')).toBeUndefined();
    } finally {
      await catalog.close();
      archive.close();
    }
  });

  it('tells an entry the zip lacks, a damaged body and one too large apart', async () => {
    const manifest = sampleManifest();
    const revision = manifest.prototypes['4711']?.revisions['17'];
    if (revision === undefined) throw new Error('sample data changed');
    const damaged = revision.files.find((file) => file.path.endsWith('/pages.json'));
    if (damaged === undefined) throw new Error('sample data changed');
    damaged.sha256 = '0'.repeat(64);
    const omitted = 'prototypes/4711/r17/layers.json';
    const archive = await openArchive(await writeSampleArchive(dir, { manifest, omit: [omitted] }));
    const catalog = await archive.catalog();
    try {
      const prototype = catalog.prototype('4711');
      if (prototype === undefined) throw new Error('no prototype 4711');
      // Listed but absent: listed, yet nothing to read.
      expect(prototype.has('layers.json')).toBe(true);
      expect(await prototype.entry('layers.json')).toBeUndefined();
      expect(await prototype.read('layers.json', 1 << 20)).toBeUndefined();
      expect((await failure(prototype.read('pages.json', 1 << 20))).code).toBe('ARCHIVE_CORRUPT');
      expect((await failure(prototype.read('pages/page0001.png', 100))).code).toBe('ARCHIVE_CORRUPT');
    } finally {
      await catalog.close();
      archive.close();
    }
  });

  it('files only what `accept` takes, hears the manifest through `visitor` and leaves no spill behind', async () => {
    const spills = join(dir, 'spills');
    await mkdir(spills);
    const archive = await openArchive(await writeSampleArchive(dir));
    const heard: string[] = [];
    const catalog = await archive.catalog({
      spillDir: spills,
      accept: (_entry, owner) => owner.prototype === '12',
      visitor: { prototype: (id) => void heard.push(id) },
    });
    expect(await readdir(spills)).toHaveLength(1);
    expect(heard).toEqual(['12', '4711']);
    expect(catalog.prototype('12')?.entries).toBeGreaterThan(0);
    expect(catalog.prototype('4711')?.entries).toBe(0);
    expect(await catalog.prototype('4711')?.read('pages.json', 1 << 20)).toBeUndefined();
    await catalog.close();
    await catalog.close();
    archive.close();
    expect(await readdir(spills)).toEqual([]);
  });

  it('says why a manifest cannot be read, and throws ARCHIVE_CORRUPT for readers that need it', async () => {
    const missing = await openArchive(await writeSampleArchive(dir, { manifest: null }));
    try {
      expect(await missing.tryManifest()).toMatchObject({ ok: false, fault: 'missing' });
      expect((await failure(missing.manifest())).code).toBe('ARCHIVE_CORRUPT');
      expect((await failure(missing.catalog())).code).toBe('ARCHIVE_CORRUPT');
    } finally {
      missing.close();
    }
    const invalid = await openArchive(await writeSampleArchive(dir, { manifest: '{"formatVersion": 1' }));
    try {
      expect(await invalid.tryManifest()).toMatchObject({ ok: false, fault: 'invalid' });
    } finally {
      invalid.close();
    }
    expect((await failure(openArchive(join(dir, 'none.zip')))).code).toBe('NOT_A_ZIP');
  });
});
