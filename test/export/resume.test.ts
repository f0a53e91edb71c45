import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { ExportEvent } from '../../src/export/events.js';
import { FULL_EXPORT_REQUESTS } from '../helpers/oracle.js';
import { manifestOf } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';
import { expectExact } from '../helpers/exact.js';

let service: FakeService;
afterEach(async () => {
  await service?.close();
});

const FULL = FULL_EXPORT_REQUESTS;

async function journalRecords(dir: string, out: string): Promise<number> {
  const text = await readFile(join(dir, `.${out}.rabbit-work`, 'journal.jsonl'), 'utf8');
  return text.split('\n').filter((line) => line.includes('"t":"file"')).length;
}

/**
 * Interrupts an export once it has had `after` answers, told by its own events: the cut comes at
 * the same point of the run however fast the machine, with no service slowed down to be caught.
 */
async function interruptedExport(dir: string, out: string, after: number): Promise<unknown> {
  const controller = new AbortController();
  let answered = 0;
  return exportAccount({
    out: join(dir, out),
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === 'response' && ++answered >= after) controller.abort();
    },
  }).catch((error: unknown) => error);
}

describe('interrupted exports resume', () => {
  it('leaves nothing at --out, then finishes byte-exact fetching little more than what was missing', async () => {
    service = await startFakeService();
    const dir = await tempDir();
    const error = await interruptedExport(dir, 'a.zip', FULL / 2);
    expect(isRabbitError(error, 'INTERRUPTED')).toBe(true);
    expect(await readdir(dir)).toEqual(['.a.zip.rabbit-work']);
    const saved = await journalRecords(dir, 'a.zip');
    expect(saved).toBeGreaterThan(FULL / 4);

    service.stats.reset();
    const events: ExportEvent[] = [];
    const result = await exportAccount({
      out: join(dir, 'a.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      onEvent: (e) => events.push(e),
    });
    expect(result.complete).toBe(true);
    expect(events.find((e) => e.type === 'start')).toMatchObject({ resumed: saved });
    const missing = FULL - saved;
    expect(service.stats.requests).toBeLessThanOrEqual(missing + FULL * 0.1);
    expect(await readdir(dir)).toEqual(['a.zip']);
    expect((await expectExact(join(dir, 'a.zip'), service)).complete).toBe(true);
  });

  it('a full export makes exactly the documented number of requests', async () => {
    service = await startFakeService();
    const dir = await tempDir();
    await exportAccount({ out: join(dir, 'f.zip'), baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    expect(service.stats.requests).toBe(FULL);
  });

  it('never trusts a damaged spool copy: the resource is fetched again', async () => {
    service = await startFakeService();
    const dir = await tempDir();
    await interruptedExport(dir, 'd.zip', FULL / 2);
    // Small bodies live in one pack file: damage the start of it, where the first bodies are.
    const pack = join(dir, '.d.zip.rabbit-work', 'spool', 'pack');
    const bytes = await readFile(pack);
    expect(bytes.length).toBeGreaterThan(8192);
    bytes.fill(0x20, 0, 4096);
    await writeFile(pack, bytes);
    const journal = (await readFile(join(dir, '.d.zip.rabbit-work', 'journal.jsonl'), 'utf8')).split('\n');
    const records = journal
      .filter((line) => line.includes('"t":"file"'))
      .map((line) => JSON.parse(line) as { offset?: number; source: string });
    const damaged = records.filter(
      (r) => r.offset !== undefined && r.offset < 4096 && !r.source.endsWith('/prototype.json'),
    );
    expect(damaged.length).toBeGreaterThan(5);
    service.stats.reset();
    const result = await exportAccount({
      out: join(dir, 'd.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
    });
    expect(result.complete).toBe(true);
    // Every damaged body was fetched again.
    for (const record of damaged) expect(service.stats.byPath.get(record.source), record.source).toBe(1);
    expect((await expectExact(join(dir, 'd.zip'), service)).complete).toBe(true);
  });

  it('sets aside a journal written for another service', async () => {
    service = await startFakeService();
    const dir = await tempDir();
    await interruptedExport(dir, 's.zip', FULL / 2);
    const journal = join(dir, '.s.zip.rabbit-work', 'journal.jsonl');
    const text = await readFile(journal, 'utf8');
    await writeFile(journal, text.replace(service.baseUrl, 'http://127.0.0.1:9'));
    service.stats.reset();
    const events: ExportEvent[] = [];
    await exportAccount({
      out: join(dir, 's.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      onEvent: (e) => events.push(e),
    });
    expect(events.some((e) => e.type === 'journal-set-aside')).toBe(true);
    expect(service.stats.requests).toBe(FULL);
    expect((await expectExact(join(dir, 's.zip'), service)).complete).toBe(true);
  });

  it('reuses nothing of a prototype that changed since the interruption', async () => {
    service = await startFakeService();
    const dir = await tempDir();
    await interruptedExport(dir, 'c.zip', FULL - 20);
    service.store.renamePrototype(3, 'renamed while interrupted');
    service.stats.reset();
    const result = await exportAccount({
      out: join(dir, 'c.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
    });
    expect((await manifestOf(result.out)).prototypes['3']?.name).toBe('renamed while interrupted');
    expect(service.stats.byPath.get('/rabbit/api/prototypes/3/pages.json')).toBe(1);
    expect((await expectExact(join(dir, 'c.zip'), service)).complete).toBe(true);
  });
});

describe('a full disk', () => {
  it('ends with DISK_FULL, nothing at --out and the space given back', async (context) => {
    const dir = await tempDir();
    const mountPoint = join(dir, 'small');
    await mkdir(mountPoint);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      // Mounting needs root; CI runs as root, so there this must work.
      if (process.env['CI']) throw new Error('cannot mount a tmpfs to simulate a full disk');
      context.skip();
    }
    try {
      service = await startFakeService({ dataset: { pngPaddingBytes: 200_000 } });
      const error = await exportAccount({
        out: join(mountPoint, 'full.zip'),
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
      }).catch((e: unknown) => e);
      expect(isRabbitError(error, 'DISK_FULL')).toBe(true);
      expect(await readdir(mountPoint)).toEqual([]);
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });
});
