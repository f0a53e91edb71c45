import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { isRabbitError, type RabbitError } from '../../src/core/errors.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { manifestOf, readArchive } from '../helpers/archive.js';
import { flipEntryByte } from '../helpers/zip-layout.js';
import { expectSameArchive, requestsFor } from './since-helpers.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const run = async (
  out: string,
  extra: { since?: string; prototypes?: Set<string>; caps?: { json: number } } = {},
  from = service,
) => {
  const result = await exportAccount({
    out: join(dir, out),
    baseUrl: from.baseUrl,
    keys: [from.keys.readOnly],
    concurrency: 4,
    ...extra,
  });
  return { ...result, manifest: await manifestOf(result.out) };
};

/**
 * A service no test changes, and its full export, made once for the tests that only read PREV from
 * it; each copies the export into its own folder as prev.zip (or another name) first. The export
 * is also what a full export of that service would give later: the reference for byte-exactness.
 */
let unchanged: FakeService;
let kept: string;
let full: Promise<string> | undefined;
beforeAll(async () => {
  unchanged = await startFakeService({ seed: 1 });
  kept = await mkdtemp(join(tmpdir(), 'rabbit-export-since-'));
});
afterAll(async () => {
  await unchanged?.close();
  await rm(kept, { recursive: true, force: true });
});
function fullExport(): Promise<string> {
  return (full ??= exportAccount({
    out: join(kept, 'full.zip'),
    baseUrl: unchanged.baseUrl,
    keys: [unchanged.keys.readOnly],
    concurrency: 4,
  }).then((result) => result.out));
}
async function unchangedPrev(name = 'prev.zip'): Promise<string> {
  const prev = join(dir, name);
  await copyFile(await fullExport(), prev);
  return prev;
}

/** Moves the first element of the first page of prototype 3: one change, made through the store. */
function moveAnElement(): { proto: string; page: string; element: string } {
  const page = service.store.prototype(3)?.pages[0];
  const element = page?.elements[0];
  if (!page || !element) throw new Error('sample data changed: prototype 3 has no element on its first page');
  service.store.updateElement(3, page.id, element.id, { position: { x: 321, y: 123 } });
  return { proto: '3', page: page.id, element: element.id };
}

/**
 * A change of revision that leaves every body and Last-Modified as it was is what a 304 is for:
 * simulated by a copy of PREV at `out` that claims the revision before the one `proto` has, its
 * files where that revision puts them.
 */
async function olderRevisionOf(prev: string, proto: string, out: string): Promise<void> {
  const { manifest, entries } = await readArchive(prev);
  const record = manifest.prototypes[proto];
  if (!record) throw new Error(`no prototype ${proto}`);
  const [now, older] = [`prototypes/${proto}/r${record.revision}/`, `prototypes/${proto}/r${record.revision - 1}/`];
  const moved = (path: string) => (path.startsWith(now) ? older + path.slice(now.length) : path);
  const listed = record.revisions[String(record.revision)];
  if (!listed) throw new Error(`no recorded revision of ${proto}`);
  record.revisions = {
    [String(record.revision - 1)]: {
      ...listed,
      files: listed.files.map((file) => ({ ...file, path: moved(file.path) })),
    },
  };
  record.revision -= 1;
  const { writeZip } = await import('../helpers/write-zip.js');
  await writeZip(
    [...entries].map(([name, entry]) => ({
      name: moved(name),
      data: name === 'manifest.json' ? JSON.stringify(manifest) : entry.data,
      store: entry.method === 0,
    })),
    out,
  );
}

describe('export --since', () => {
  it('after a change, is byte-exact to a full export, with one request per unchanged prototype', async () => {
    await run('prev.zip');
    const before = service.store.prototypeIds();
    moveAnElement();

    service.stats.reset();
    const inc = await run('inc.zip', { since: join(dir, 'prev.zip') });
    const incStats = new Map(service.stats.byPath);
    expect(inc.complete).toBe(true);
    const full = await run('full.zip');
    expect(full.complete).toBe(true);

    await expectSameArchive(join(dir, 'inc.zip'), join(dir, 'full.zip'));

    service.stats.byPath.clear();
    for (const [path, count] of incStats) service.stats.byPath.set(path, count);
    expect(before).toContain('3');
    expect(requestsFor(service, '3').size, 'the changed prototype is fetched in full').toBeGreaterThan(10);
    expect(inc.manifest.prototypes['3']?.origin).toEqual({ mode: 'fetched' });
    for (const id of before.filter((id) => id !== '3')) {
      expect([...requestsFor(service, id)], `prototype ${id}`).toEqual([[`/rabbit/api/prototypes/${id}.json`, 1]]);
      expect(inc.manifest.prototypes[id]?.origin).toEqual({ mode: 'reused', archive: 'prev.zip' });
    }
    // The lists were asked once; nothing outside the prototypes besides.
    expect(incStats.get('/rabbit/api/prototypes.json')).toBe(1);
  });

  it('refetches an entry damaged in PREV (flipped byte) and reuses the rest', async () => {
    const prev = await unchangedPrev();
    const first = await manifestOf(prev);
    const victim = first.prototypes['1001']?.revisions[String(first.prototypes['1001']?.revision)]?.files.find((file) =>
      file.path.endsWith('.png'),
    );
    if (!victim) throw new Error('prototype 1001 has no PNG');
    await flipEntryByte(prev, victim.path);

    unchanged.stats.reset();
    const inc = await run('inc.zip', { since: prev }, unchanged);
    expect(inc.complete).toBe(true);
    expect([...requestsFor(unchanged, '1001')].sort()).toEqual(
      [
        [`/rabbit/api/prototypes/1001.json`, 1],
        [victim.source, 1],
      ].sort(),
    );
    expect(requestsFor(unchanged, '1002').size).toBe(1);
    expect(inc.manifest.prototypes['1001']?.origin).toEqual({ mode: 'fetched' });
    expect(inc.manifest.prototypes['1002']?.origin?.mode).toBe('reused');
    await expectSameArchive(join(dir, 'inc.zip'), await fullExport());
  });

  it('fetches in full a prototype PREV does not hold, and leaves out a deleted one', async () => {
    const ids = service.store.prototypeIds();
    await run('partial.zip', { prototypes: new Set(ids.filter((id) => id !== '1002')) });
    service.store.deletePrototype(1001);

    service.stats.reset();
    const inc = await run('inc.zip', { since: join(dir, 'partial.zip') });
    expect(inc.complete).toBe(true);
    expect(requestsFor(service, '1002').size).toBeGreaterThan(10);
    expect(inc.manifest.prototypes['1002']?.origin).toEqual({ mode: 'fetched' });
    expect(inc.manifest.prototypes['1001']).toBeUndefined();
    expect(allFileEntries(inc.manifest).some((file) => file.path.startsWith('prototypes/1001/'))).toBe(false);
    expect(inc.manifest.prototypes['3']?.origin?.mode).toBe('reused');
    await run('full.zip');
    await expectSameArchive(join(dir, 'inc.zip'), join(dir, 'full.zip'));
  });

  it('revalidates a changed prototype with If-Modified-Since and keeps the copies the service calls unmodified', async () => {
    await run('prev.zip');
    await olderRevisionOf(join(dir, 'prev.zip'), '1001', join(dir, 'older.zip'));

    service.stats.reset();
    const inc = await run('inc.zip', { since: join(dir, 'older.zip') });
    expect(inc.complete).toBe(true);
    const seen = requestsFor(service, '1001');
    expect(seen.size).toBeGreaterThan(10);
    expect(service.stats.statuses.get(304)).toBe(seen.size - 1);
    expect(inc.manifest.prototypes['1001']?.origin).toEqual({ mode: 'reused', archive: 'older.zip' });
    await expectSameArchive(join(dir, 'inc.zip'), join(dir, 'prev.zip'));
  });

  it('refuses an unreadable PREV or one from another service before any request, writing nothing', async () => {
    await writeFile(join(dir, 'junk.zip'), 'not a zip at all');
    service.stats.reset();
    const error = await run('inc.zip', { since: join(dir, 'junk.zip') }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'USAGE')).toBe(true);
    expect(service.stats.requests).toBe(0);

    await unchangedPrev();
    const other = await startFakeService({ seed: 1 });
    try {
      const refused = await exportAccount({
        out: join(dir, 'x.zip'),
        baseUrl: other.baseUrl,
        keys: [other.keys.readOnly],
        since: join(dir, 'prev.zip'),
      }).catch((e: unknown) => e);
      expect(isRabbitError(refused, 'USAGE')).toBe(true);
      // A way out that works as given: an archive of this service, or a full export.
      expect((refused as RabbitError).data?.['next']).toMatch(
        new RegExp(`give --since an archive exported from ${other.baseUrl}, or run without --since`),
      );
      expect(other.stats.requests).toBe(0);
    } finally {
      await other.close();
    }
    expect((await readdir(dir)).sort()).toEqual(['junk.zip', 'prev.zip']);
  });

  // Tonight's cap holds for a copy as for a download: PREV must not let in a body a request would refuse.
  it.each([
    ['unchanged, its copies used without asking', false],
    ['changed, its copies revalidated', true],
  ])(
    "refuses a body over tonight's cap that PREV holds, as a run without --since does (prototype %s)",
    async (_, changed) => {
      const page = service.store.prototype(3)?.pages[0];
      const element = page?.elements[0];
      if (!page || !element) throw new Error('sample data changed: prototype 3 has no element on its first page');
      // 64 KiB of text in one element, over a cap of 16 KiB; every other JSON body of the account is under a KiB.
      service.store.updateElement(3, page.id, element.id, { text: 'x'.repeat(64 * 1024) });
      const big = `/rabbit/api/prototypes/3/pages/${page.id}/elements/${element.id}.json`;
      await run('prev.zip');
      const prev = join(dir, 'prev.zip');
      if (changed) await olderRevisionOf(prev, '3', join(dir, 'older.zip'));
      const caps = { json: 16 * 1024 };

      const inc = await run('inc.zip', { since: changed ? join(dir, 'older.zip') : prev, caps });
      const full = await run('full.zip', { caps });
      expect(full.manifest.errors).toEqual([expect.objectContaining({ source: big, code: 'BODY_TOO_LARGE' })]);
      expect(inc.complete).toBe(false);
      expect(inc.manifest.errors).toEqual(full.manifest.errors);
      await expectSameArchive(join(dir, 'inc.zip'), join(dir, 'full.zip'));
    },
  );

  it('a copy of PREV under another name is named as the origin', async () => {
    const monday = await unchangedPrev('monday.zip');
    const inc = await run('inc.zip', { since: monday }, unchanged);
    expect(inc.manifest.prototypes['3']?.origin).toEqual({ mode: 'reused', archive: 'monday.zip' });
  });
});
