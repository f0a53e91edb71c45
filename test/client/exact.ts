import { expect } from 'vitest';
import { allFileEntries } from '../../src/manifest/types.js';
import type { Manifest } from '../../src/manifest/types.js';
import { readArchive } from '../helpers/archive.js';
import { servedEntries } from '../helpers/oracle.js';

/**
 * The archive holds every body the oracle walk saw, byte for byte, and nothing else served: except
 * the sources named in `missing`, which it must not hold.
 */
export async function expectArchiveMatches(
  out: string,
  served: Map<string, Buffer>,
  missing: ReadonlySet<string> = new Set(),
): Promise<Manifest> {
  const { manifest, entries } = await readArchive(out);
  const files = servedEntries(allFileEntries(manifest));
  const expected = [...served.keys()].filter((source) => !missing.has(source));
  expect(new Set(files.map((file) => file.source))).toEqual(new Set(expected));
  expect(files.length).toBe(expected.length);
  for (const file of files) {
    const body = served.get(file.source) as Buffer;
    expect(entries.get(file.path)?.data.equals(body), `${file.path} differs from ${file.source}`).toBe(true);
  }
  return manifest;
}
