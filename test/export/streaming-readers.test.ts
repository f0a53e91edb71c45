import { createHash } from 'node:crypto';
import { inflateRawSync, crc32 } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { localData, walkLocalHeaders } from '../zip/zip-walk.js';
import { tempDir } from '../helpers/temp.js';

let service: FakeService;
beforeAll(async () => {
  // Page renderings of over 1 MiB: stored entries streamed from their own spool file.
  service = await startFakeService({
    seed: 5,
    dataset: { prototypes: 1, pagesPerPrototype: 2, pngPaddingBytes: 1_200_000 },
  });
});
afterAll(() => service.close());

describe('an export read as streaming readers read it', () => {
  it('has every entry size and CRC in its local header, large stored PNGs and the manifest included', async () => {
    const out = join(await tempDir(), 'stream.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      concurrency: 4,
    });
    expect(result.complete).toBe(true);
    const { entries, signatureAtEnd } = await walkLocalHeaders(out);
    // The walk ends exactly where the central directory starts.
    expect(signatureAtEnd).toBe(0x02014b50);
    expect(entries.at(-1)?.name).toBe('manifest.json');
    const byName = new Map(entries.map((entry) => [entry.name, entry]));
    const manifestEntry = byName.get('manifest.json');
    if (!manifestEntry) throw new Error('no manifest.json');
    const manifestBytes = inflateRawSync(await localData(out, manifestEntry));
    expect(manifestBytes.length).toBe(manifestEntry.size);
    expect(crc32(manifestBytes) >>> 0).toBe(manifestEntry.crc);
    const listed = allFileEntries(JSON.parse(manifestBytes.toString('utf8')));
    expect(entries.length).toBe(listed.length + 1);
    for (const file of listed) {
      const entry = byName.get(file.path);
      if (!entry) throw new Error(`${file.path} has no local header`);
      const raw = await localData(out, entry);
      const data = entry.method === 0 ? raw : inflateRawSync(raw);
      expect(data.length, file.path).toBe(entry.size);
      expect(crc32(data) >>> 0, file.path).toBe(entry.crc);
      expect(createHash('sha256').update(data).digest('hex'), file.path).toBe(file.sha256);
    }
    // Every page rendering is padded past 1 MiB, and stored rather than deflated.
    const bigPngs = listed.filter((file) => file.path.endsWith('.png') && file.size > 1024 * 1024);
    expect(bigPngs.length).toBe(listed.filter((file) => /^prototypes\/.*\.png$/.test(file.path)).length);
    expect(bigPngs.length).toBeGreaterThanOrEqual(2);
    expect(bigPngs.map((file) => [file.path, byName.get(file.path)?.method])).toEqual(
      bigPngs.map((file) => [file.path, 0]),
    );
  });
});
