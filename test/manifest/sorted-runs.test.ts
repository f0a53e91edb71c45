import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ArchiveModel } from '../../src/manifest/archive-model.js';
import type { StoredFile } from '../../src/storage/stored-file.js';
import { manifestText } from '../../src/manifest/write-manifest.js';
import type { Manifest } from '../../src/manifest/types.js';
import { KeyedSpill } from '../../src/storage/keyed-spill.js';
import { compareIds } from '../../src/api/ids.js';
import { createRng } from '../../src/fake-service/prng.js';
import { tempDir } from '../helpers/temp.js';

const meta = {
  toolVersion: '9.9.9',
  baseUrl: 'https://rabbit.test',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:01:00.000Z',
  stats: { requests: 1, retries: 0, bytes: 1, files: 1 },
};

/** A prototype's paths in a shuffled order, element bodies and the rest mixed, leading zeros included. */
function shuffledPaths(count: number): string[] {
  const paths: string[] = [];
  for (let page = 1; paths.length < count; page++) {
    const base = `prototypes/7/r1/pages/page${page % 3 === 0 ? String(page).padStart(4, '0') : page}`;
    paths.push(`${base}.json`, `${base}.html`, `${base}/elements.json`);
    for (let e = 1; e <= 5; e++) paths.push(`${base}/elements/element${page * 10 + e}.json`);
  }
  const rng = createRng(3, 'shuffle');
  for (let i = paths.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [paths[i], paths[j]] = [paths[j] as string, paths[i] as string];
  }
  return paths.slice(0, count);
}

async function filled(runLines: number | undefined, paths: readonly string[]): Promise<ArchiveModel> {
  const spill = await KeyedSpill.create(join(await tempDir(), 'entries'));
  // Closed by the test, not left to the garbage collector (which warns, and in a later Node throws).
  onTestFinished(() => spill.close());
  const model = new ArchiveModel(
    spill,
    () => undefined,
    (text) => text,
    runLines,
  );
  model.addPrototype({
    id: '7',
    name: 'p',
    lastModification: 1,
    lastUser: null,
    revision: 1,
    milestone: null,
    origin: { mode: 'fetched' },
  });
  for (const [i, path] of paths.entries()) {
    const file: StoredFile = {
      path,
      source: `/rabbit/api/${path}`,
      sha256: 'cd'.repeat(32),
      size: i,
      contentType: 'application/json',
      lastModified: null,
      file: '/spool/pack',
      offset: i * 10,
    };
    model.addFile('7', file);
  }
  return model;
}

async function text(m: ArchiveModel): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of manifestText(m, meta))
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return Buffer.concat(parts).toString('utf8');
}

describe('a prototype with more files than one sort run', () => {
  it('is sorted in runs on disk and merged into the order an in-memory sort gives', async () => {
    const paths = shuffledPaths(2_000);
    const runs = await filled(37, paths);
    const whole = await filled(undefined, paths);
    const sorted = [...paths].sort(compareIds);
    expect((await runs.files('7')).map((file) => file.path)).toEqual(sorted);
    expect((await runs.files('7', { elementBodies: false })).map((file) => file.path)).toEqual(
      sorted.filter((path) => !/\/elements\/element\d+\.json$/.test(path)),
    );
    // Read twice: the runs of one read are not mixed into the next.
    expect((await runs.files('7')).map((file) => file.path)).toEqual(sorted);
    const written = await text(runs);
    expect(written).toBe(await text(whole));
    const manifest = JSON.parse(written) as Manifest;
    expect(manifest.prototypes['7']?.revisions['1']?.files.map((file) => file.path)).toEqual(sorted);
  });

  it('of exactly one run, or one more line than that, gives the same order', async () => {
    for (const count of [37, 38, 74, 75]) {
      const paths = shuffledPaths(count);
      expect(
        (await (await filled(37, paths)).files('7')).map((file) => file.path),
        String(count),
      ).toEqual([...paths].sort(compareIds));
    }
  });
});

describe("a prototype's files as filed", () => {
  // issue 42: the search index looks bodies up by name, and read them through the sort (and its
  // runs on disk) only to put them in an order it does not use.
  it('are every file, element bodies included, each once, as the sorted read has them', async () => {
    const paths = shuffledPaths(500);
    const model = await filled(37, paths);
    const filed: string[] = [];
    for await (const entry of model.filedEntries('7')) filed.push(entry.path);
    expect([...filed].sort(compareIds)).toEqual((await model.files('7')).map((file) => file.path));
    const sorted = await model.files('7');
    const byPath = new Map(sorted.map((file) => [file.path, file]));
    for await (const entry of model.filedEntries('7')) expect(entry).toEqual(byPath.get(entry.path));
  });
});
