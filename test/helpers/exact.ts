import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { allFileEntries, type Manifest } from '../../src/manifest/types.js';
import { readArchive } from './archive.js';
import { servedEntries, walkService } from './oracle.js';

/**
 * The archive holds every body in `served` byte for byte, with the size and SHA-256 its manifest
 * records, and nothing else served: except the sources named in `missing`, which it must not hold.
 */
export async function expectArchiveMatches(
  out: string,
  served: ReadonlyMap<string, Buffer>,
  missing: Iterable<string> = [],
): Promise<Manifest> {
  const absent = new Set(missing);
  const { manifest, entries } = await readArchive(out);
  const files = servedEntries(allFileEntries(manifest));
  const expected = [...served.keys()].filter((source) => !absent.has(source));
  expect(new Set(files.map((file) => file.source))).toEqual(new Set(expected));
  expect(files.length).toBe(expected.length);
  for (const file of files) {
    const body = served.get(file.source) as Buffer;
    expect(entries.get(file.path)?.data.equals(body), `${file.path} differs from ${file.source}`).toBe(true);
    expect(file.size, file.path).toBe(body.length);
    expect(file.sha256, file.path).toBe(createHash('sha256').update(body).digest('hex'));
  }
  return manifest;
}

/**
 * Every file the archive holds from the service is what the service serves, byte for byte. The
 * service's faults and compression are switched off first so the oracle walk sees the plain bodies.
 */
export async function expectExact(out: string, svc: FakeService, missing: Iterable<string> = []): Promise<Manifest> {
  svc.setFaults(undefined);
  svc.setCompression(undefined);
  return expectArchiveMatches(out, await walkService(svc.baseUrl, svc.keys.readOnly), missing);
}
