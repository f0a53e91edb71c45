import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { listArchive } from '../../src/verify/list-archive.js';
import { sampleFiles, sampleManifest, writeSampleArchive } from './sample-archive.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'list-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('listArchive', () => {
  it('counts pages, layers, elements, discussions, resources and bytes per prototype, sorted by id', async () => {
    const rows = await listArchive(await writeSampleArchive(dir));
    const files = sampleFiles().byPrototype;
    const bytes = (id: string): number => (files[id]?.files ?? []).reduce((sum, file) => sum + file.body.length, 0);
    expect(rows).toEqual([
      {
        id: '12',
        name: null,
        revision: 3,
        pages: 1,
        layers: 0,
        elements: 0,
        discussions: 0,
        resources: 3,
        bytes: bytes('12'),
        errors: 0,
        complete: true,
      },
      {
        id: '4711',
        name: 'Shop 🛒\nnew line',
        revision: 17,
        pages: 2,
        layers: 1,
        elements: 3,
        discussions: 1,
        resources: files['4711']?.files.length,
        bytes: bytes('4711'),
        errors: 0,
        complete: true,
      },
    ]);
    expect(rows[1]?.resources).toBeGreaterThan(8);
    expect(rows[1]?.bytes).toBeGreaterThan(2048);
  });

  it('attributes errors by API path, and lists prototypes known only from errors', async () => {
    const errors = [
      { source: '/rabbit/api/prototypes/12/pages/page2.json', status: 500, message: 'HTTP 500' },
      { source: '/rabbit/api/prototypes/12.json', status: 503, message: 'HTTP 503' },
      // 123 must not count for 12, nor 4711 for 47.
      { source: '/rabbit/api/prototypes/123.json', status: 404, message: 'HTTP 404' },
      { source: '/rabbit/api/prototypes.json', status: 500, message: 'list failed once' },
      { source: 'prototypes/4711/r17/pages/page0001.png', code: 'DISK_FULL', message: 'local failure' },
    ];
    const rows = await listArchive(await writeSampleArchive(dir, { manifest: sampleManifest(errors) }));
    expect(rows.map((r) => [r.id, r.errors, r.complete])).toEqual([
      ['12', 2, false],
      ['123', 1, false],
      ['4711', 1, true],
    ]);
    expect(rows[1]).toMatchObject({ name: null, revision: null, pages: 0 });
  });

  it('sorts ids numerically', async () => {
    const manifest = sampleManifest();
    const record = manifest.prototypes['12'];
    if (!record) throw new Error('sample lost prototype 12');
    for (const id of ['9', '100', '10']) manifest.prototypes[id] = { ...record, revisions: {} };
    const rows = await listArchive(await writeSampleArchive(dir, { manifest }));
    expect(rows.map((r) => r.id)).toEqual(['9', '10', '12', '100', '4711']);
  });

  it.each([
    { label: 'has no manifest', manifest: null },
    { label: 'has a manifest that is not one', manifest: '{"hello":"world"}' },
  ])('refuses an archive that $label with ARCHIVE_CORRUPT', async ({ manifest }) => {
    const error = await listArchive(await writeSampleArchive(dir, { manifest })).catch((e: unknown) => e);
    expect(isRabbitError(error, 'ARCHIVE_CORRUPT')).toBe(true);
  });
});
