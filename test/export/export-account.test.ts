import { createHash } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { DEFLATE_FROM_BYTES } from '../../src/archive/archive-sink.js';
import { archivePathFor } from '../../src/api/paths.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { isRabbitError } from '../../src/core/errors.js';
import { servedEntries, walkService } from '../helpers/oracle.js';
import { manifestOf, readArchive } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';
import { assertValidManifest } from '../helpers/manifest-schema.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;

useFakeService({ seed: 1 }, (fixture) => (service = fixture.service));

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('exportAccount', () => {
  it('archives every body the service serves, byte for byte, with a valid manifest', async () => {
    const dir = await tempDir();
    const out = join(dir, 'account.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      concurrency: 4,
    });
    expect(result.complete).toBe(true);

    const served = await walkService(service.baseUrl, service.keys.readOnly);
    const { manifest, entries } = await readArchive(out);
    assertValidManifest(manifest);
    expect(manifest.complete).toBe(true);
    expect(manifest.errors).toEqual([]);

    const files = servedEntries(allFileEntries(manifest));
    // Every GET is there exactly once, and nothing else.
    expect(new Set(files.map((f) => f.source))).toEqual(new Set(served.keys()));
    expect(files.length).toBe(served.size);
    expect(new Set(entries.keys())).toEqual(new Set(['manifest.json', ...allFileEntries(manifest).map((f) => f.path)]));

    for (const file of files) {
      const body = served.get(file.source) as Buffer;
      const entry = entries.get(file.path);
      expect(entry, file.path).toBeDefined();
      expect(entry?.data.equals(body), `${file.path} differs from ${file.source}`).toBe(true);
      expect(file.sha256).toBe(sha256(body));
      expect(file.size).toBe(body.length);
      expect(entry?.method, file.path).toBe(file.path.endsWith('.png') || body.length < DEFLATE_FROM_BYTES ? 0 : 8);
    }
    for (const [id, record] of Object.entries(manifest.prototypes)) {
      const rev = String(record.revision);
      expect(Object.keys(record.revisions)).toEqual([rev]);
      for (const file of servedEntries(record.revisions[rev]?.files ?? [])) {
        expect(file.path).toBe(archivePathFor(file.source, record.revision));
        expect(file.path.startsWith(`prototypes/${id}/r${rev}/`)).toBe(true);
      }
    }
    // Outside the prototypes: the list, the viewer's index and overview pages, the search index,
    // and the content-addressed page requisites.
    const pages = (prefix: string) => manifest.files.filter((file) => file.path.startsWith(prefix));
    for (const file of pages('search/')) {
      expect(file.path).toMatch(/^search\/(index|search-box|prototype-\d+)\.js$/);
      expect(file.source).toBe('generated');
    }
    for (const file of pages('overview/')) {
      expect(file.path).toMatch(/^overview\/prototype-\d+\.html$/);
      expect(file.source).toBe('generated');
    }
    const rest = manifest.files.filter(
      (file) => !['prototypes.json', 'index.html'].includes(file.path) && !/^(search|overview)\//.test(file.path),
    );
    for (const file of rest) {
      expect(file.path).toMatch(
        new RegExp(`^assets/${file.source === 'generated' ? '[0-9a-f]{64}\\.view' : file.sha256}\\.[a-z]+$`),
      );
    }
    expect(manifest.files.map((f) => f.path)).toContain('prototypes.json');
    expect(manifest.source.baseUrl).toBe(service.baseUrl);
  });

  it('names each revision by the highest milestone, whatever order they are listed in', async () => {
    const dir = await tempDir();
    const out = join(dir, 'a.zip');
    await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    const { manifest, entries } = await readArchive(out);
    let sawUnsorted = false;
    let sawNone = false;
    for (const [id, record] of Object.entries(manifest.prototypes)) {
      const metaPath = `prototypes/${id}/r${record.revision}/prototype.json`;
      const meta = JSON.parse((entries.get(metaPath)?.data ?? Buffer.from('null')).toString()) as {
        versions?: { milestones?: Array<{ revision: number }> };
      };
      const revisions = (meta.versions?.milestones ?? []).map((m) => m.revision);
      expect(record.revision).toBe(revisions.length ? Math.max(...revisions) : 0);
      if (revisions.some((r, i) => i > 0 && r < (revisions[i - 1] as number))) sawUnsorted = true;
      if (!revisions.length) sawNone = true;
    }
    // The sample must exercise both awkward cases, or this test proves nothing.
    expect(sawUnsorted).toBe(true);
    expect(sawNone).toBe(true);
  });

  it('keeps exactly N requests in flight while work remains, never more', async () => {
    service.setLatency(15);
    const dir = await tempDir();
    const result = await exportAccount({
      out: join(dir, 'c.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      concurrency: 6,
    });
    expect(service.stats.peakInFlight).toBe(6);
    expect(result.peakInFlight).toBe(6);
  });

  it('prints nothing itself and never writes the key anywhere', async () => {
    const writes = vi.spyOn(process.stdout, 'write');
    const errors = vi.spyOn(process.stderr, 'write');
    const dir = await tempDir();
    const out = join(dir, 'k.zip');
    const events: unknown[] = [];
    await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      onEvent: (e) => events.push(e),
    });
    expect(writes).not.toHaveBeenCalled();
    expect(errors).not.toHaveBeenCalled();
    writes.mockRestore();
    errors.mockRestore();
    const { entries } = await readArchive(out);
    for (const [name, entry] of entries) {
      expect(entry.data.includes(service.keys.readOnly), name).toBe(false);
    }
    expect(JSON.stringify(events)).not.toContain(service.keys.readOnly);
    expect(await readdir(dir)).toEqual(['k.zip']);
  });

  it('fails fast on a refused key, leaving nothing in the output directory', async () => {
    const dir = await tempDir();
    const error = await exportAccount({
      out: join(dir, 'x.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.invalid],
    }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'KEY_REFUSED')).toBe(true);
    expect(String((error as Error).message)).not.toContain(service.keys.invalid);
    // Fast means no retries: the service heard one request, the refused one.
    expect(service.stats.requests).toBe(1);
    expect([...service.stats.statuses]).toEqual([[401, 1]]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('fails on an unreachable host, leaving nothing behind', async () => {
    const dir = await tempDir();
    const closed = await startFakeService();
    const url = closed.baseUrl;
    await closed.close();
    const error = await exportAccount({
      out: join(dir, 'x.zip'),
      baseUrl: url,
      keys: ['k'.repeat(40)],
      retry: { attempts: 2, baseDelayMs: 10 },
    }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'CONNECTION_REFUSED')).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses an output directory that does not exist, before any request', async () => {
    const dir = await tempDir();
    const error = await exportAccount({
      out: join(dir, 'missing', 'x.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
    }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'OUTPUT_UNWRITABLE')).toBe(true);
    expect(service.stats.requests).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it('does not replace an existing archive without force', async () => {
    const dir = await tempDir();
    const out = join(dir, 'exists.zip');
    await writeFile(out, 'precious');
    const error = await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] }).catch(
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'OUTPUT_EXISTS')).toBe(true);
    expect(await readdir(dir)).toEqual(['exists.zip']);
    const result = await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly], force: true });
    expect(result.complete).toBe(true);
  });

  it('exports only what a per-prototype key can read', async () => {
    const [id, key] = Object.entries(service.keys.perPrototype)[0] as [string, string];
    const dir = await tempDir();
    const out = join(dir, 'one.zip');
    const result = await exportAccount({ out, baseUrl: service.baseUrl, keys: [key] });
    expect(Object.keys((await manifestOf(result.out)).prototypes)).toEqual([id]);
    expect(result.complete).toBe(true);
  });
});
