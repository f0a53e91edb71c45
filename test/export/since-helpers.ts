import { expect } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import type { FileEntry, Manifest } from '../../src/manifest/types.js';
import { readArchive } from '../helpers/archive.js';
import { zipLayout } from '../helpers/zip-layout.js';

/** Requests the service saw for one prototype: its metadata and everything below it. */
export function requestsFor(service: FakeService, id: string): Map<string, number> {
  const own = new Map<string, number>();
  for (const [path, count] of service.stats.byPath) {
    if (path === `/rabbit/api/prototypes/${id}.json` || path.startsWith(`/rabbit/api/prototypes/${id}/`))
      own.set(path, count);
  }
  return own;
}

/**
 * The manifest without what legitimately differs between two runs of the same state: the run's
 * times and stats, origins, and when each body was fetched (a reused body keeps its first fetch).
 */
export function comparable(manifest: Manifest): unknown {
  const { startedAt: _s, finishedAt: _f, stats: _t, ...rest } = manifest;
  const untimed = (files: FileEntry[]): FileEntry[] => files.map(({ fetchedAt: _at, ...file }) => file);
  const prototypes = Object.fromEntries(
    Object.entries(rest.prototypes).map(([id, { origin: _o, ...record }]) => [
      id,
      {
        ...record,
        revisions: Object.fromEntries(
          Object.entries(record.revisions).map(([n, revision]) => [n, { ...revision, files: untimed(revision.files) }]),
        ),
      },
    ]),
  );
  return { ...rest, files: untimed(rest.files), prototypes };
}

/**
 * Two archives hold the same entries byte for byte (same data, compression, CRC and dates, as the
 * central directory records them), manifest timestamps, stats and origins aside.
 */
export async function expectSameArchive(actual: string, expected: string): Promise<void> {
  const a = await readArchive(actual);
  const b = await readArchive(expected);
  expect([...a.entries.keys()].sort()).toEqual([...b.entries.keys()].sort());
  for (const [name, entry] of b.entries) {
    if (name === 'manifest.json') continue;
    expect(a.entries.get(name)?.data.equals(entry.data), `${name} differs`).toBe(true);
  }
  expect(comparable(a.manifest)).toEqual(comparable(b.manifest));
  const layoutA = await zipLayout(actual);
  const layoutB = await zipLayout(expected);
  for (const [name, entry] of layoutB) {
    if (name === 'manifest.json') continue;
    const { dataOffset: _a, ...mine } = layoutA.get(name) ?? ({} as never);
    const { dataOffset: _b, ...theirs } = entry;
    expect(mine, name).toEqual(theirs);
  }
}
