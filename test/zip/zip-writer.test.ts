import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import yauzl from 'yauzl';
import { isRabbitError } from '../../src/core/errors.js';
import { openZip } from '../../src/zip/zip-reader.js';
import { DEFAULT_ENTRY_DATE, ZipWriter } from '../../src/zip/zip-writer.js';
import { writeZip, type ZipSource } from '../helpers/write-zip.js';
import { requireTool } from '../helpers/tools.js';
import { whenever } from '../helpers/until.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-writer-'));
});
afterEach(async () => {
  await chmod(dir, 0o755).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(3000)]);
const JSON_BODY = JSON.stringify({ id: 'page0001', name: 'Startseite ✓ 🐇', layers: ['layer5'] }, null, 2);

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a RabbitError ${code}`).toBeDefined();
  expect(isRabbitError(error) ? error.code : error).toBe(code);
}

async function leftovers(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.tmp'));
}

describe('writeZip', () => {
  it('reads back every entry byte for byte, PNG stored and text deflated', async () => {
    const pngFile = join(dir, 'page.png');
    const jsonFile = join(dir, 'page.json');
    await writeFile(pngFile, PNG);
    await writeFile(jsonFile, JSON_BODY);
    const cases: Array<{ source: ZipSource; bytes: Buffer; method: number }> = [
      {
        source: { name: 'manifest.json', data: '{"formatVersion":1}', store: false },
        bytes: Buffer.from('{"formatVersion":1}'),
        method: 8,
      },
      { source: { name: 'prototypes/4711/r17/pages/page0001.png', file: pngFile, store: true }, bytes: PNG, method: 0 },
      {
        source: { name: 'prototypes/4711/r17/pages/page0001.json', file: jsonFile, store: false },
        bytes: Buffer.from(JSON_BODY),
        method: 8,
      },
      { source: { name: 'prototypes/4711/r17/pages/page0002.png', data: PNG, store: true }, bytes: PNG, method: 0 },
      {
        source: { name: 'prototypes/4711/r17/pages/page0001.html', data: '<p>é</p>', store: false },
        bytes: Buffer.from('<p>é</p>'),
        method: 8,
      },
    ];
    const dest = join(dir, 'out.zip');
    const result = await writeZip(
      cases.map((c) => c.source),
      dest,
    );
    expect(result.entries).toBe(cases.length);
    expect(result.bytes).toBe((await stat(dest)).size);

    const reader = await openZip(dest);
    try {
      expect([...reader.entries.keys()]).toEqual(cases.map((c) => c.source.name));
      for (const { source, bytes, method } of cases) {
        expect(reader.entries.get(source.name)?.compressionMethod, source.name).toBe(method);
        expect((await reader.readEntry(source.name)).equals(bytes), source.name).toBe(true);
      }
    } finally {
      reader.close();
    }
  });

  it('writes identical bytes for identical entries, with a fixed default date', async () => {
    const entries = (): ZipSource[] => [
      { name: 'manifest.json', data: JSON_BODY, store: false },
      { name: 'prototypes/1/r1/pages/page1.png', data: PNG, store: true },
    ];
    const first = join(dir, 'a.zip');
    const second = join(dir, 'b.zip');
    await writeZip(entries(), first);
    // The second archive is written a day later by the clock: far more than DOS time's 2 s tick.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 86_400_000);
      await writeZip(entries(), second);
    } finally {
      vi.useRealTimers();
    }
    expect((await readFile(first)).equals(await readFile(second))).toBe(true);

    const zip = await yauzl.openPromise(first, { lazyEntries: true, autoClose: false });
    try {
      for await (const entry of zip.eachEntry()) {
        expect(entry.getLastModDate({ timezone: 'UTC' }).toISOString()).toBe(DEFAULT_ENTRY_DATE.toISOString());
      }
    } finally {
      zip.close();
    }
  });

  it('uses the date given per entry', async () => {
    const date = new Date(Date.UTC(2023, 4, 31, 12, 0, 0));
    const dest = join(dir, 'dated.zip');
    await writeZip([{ name: 'a.json', data: '{}', store: false, date }], dest);
    const zip = await yauzl.openPromise(dest, { lazyEntries: true, autoClose: false });
    try {
      for await (const entry of zip.eachEntry()) {
        expect(entry.getLastModDate({ timezone: 'UTC' }).toISOString()).toBe(date.toISOString());
      }
    } finally {
      zip.close();
    }
  });

  it('pulls the next source only after the previous one is in the archive', async () => {
    const written: number[] = [];
    const pulledAfter: number[] = [];
    async function* sources(): AsyncGenerator<ZipSource> {
      for (let i = 0; i < 5; i += 1) {
        pulledAfter.push(written.length);
        yield { name: `e${i}.json`, data: `{"i":${i}}`, store: false };
      }
    }
    const counts: number[] = [];
    await writeZip(sources(), join(dir, 'lazy.zip'), {
      onProgress: (bytes, entries) => {
        written.push(bytes);
        counts.push(entries);
      },
    });
    expect(pulledAfter).toEqual([0, 1, 2, 3, 4]);
    expect(counts).toEqual([1, 2, 3, 4, 5, 5]); // one per entry, then the finished archive
    expect(written.every((bytes, i) => i === 0 || bytes >= (written[i - 1] ?? 0))).toBe(true);
  });

  it('handles thousands of file entries', async () => {
    const count = 3000;
    // Each entry a range of one file, as the export's are ranges of its pack files: the writer
    // opens, reads and closes the file for each entry all the same, and creating and removing
    // 3,000 files took most of this test's time.
    const bodies = Array.from({ length: count }, (_, i) => Buffer.from(`{"n":${i}}`));
    const pack = join(dir, 'pack');
    await writeFile(pack, Buffer.concat(bodies));
    const dest = join(dir, 'many.zip');
    const writer = await ZipWriter.create(dest);
    let offset = 0;
    for (const [i, body] of bodies.entries()) {
      await writer.addFile({ name: `d/${i}.json`, store: false }, { file: pack, offset, size: body.length });
      offset += body.length;
    }
    const result = await writer.finish();
    expect(result.entries).toBe(count);
    const reader = await openZip(dest);
    try {
      expect(reader.entries.size).toBe(count);
      for (const i of [0, 1234, 2999]) expect((await reader.readEntry(`d/${i}.json`)).toString()).toBe(`{"n":${i}}`);
    } finally {
      reader.close();
    }
  });

  it('passes unzip -t', async () => {
    requireTool('unzip');
    const dest = join(dir, 'tested.zip');
    await writeZip(
      [
        { name: 'manifest.json', data: JSON_BODY, store: false },
        { name: 'prototypes/1/r1/pages/page1.png', data: PNG, store: true },
      ],
      dest,
    );
    const output = (await promisify(execFile)('unzip', ['-t', dest])).stdout;
    expect(output).toMatch(/No errors detected/);
  });

  describe('atomicity', () => {
    it('leaves no file and no temp file when aborted between entries', async () => {
      const controller = new AbortController();
      async function* sources(): AsyncGenerator<ZipSource> {
        yield { name: 'a.json', data: '{}', store: false };
        yield { name: 'b.json', data: '{}', store: false };
        controller.abort();
        yield { name: 'c.json', data: '{}', store: false };
      }
      const dest = join(dir, 'aborted.zip');
      await expectCode(writeZip(sources(), dest, { signal: controller.signal }), 'INTERRUPTED');
      await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await leftovers()).toEqual([]);
    });

    it('stops mid-entry when aborted while a large file streams, keeping the old archive', async () => {
      const big = join(dir, 'big.bin');
      await writeFile(big, randomBytes(24 * 1024 * 1024));
      const dest = join(dir, 'existing.zip');
      await writeFile(dest, 'the previous archive');
      const controller = new AbortController();
      // Abort once a temp file has started to grow, i.e. in the middle of the big entry.
      const stop = whenever(
        async () => {
          for (const temp of (await readdir(dir)).filter((n) => n.endsWith('.tmp')))
            if ((await stat(join(dir, temp)).catch(() => undefined))?.size) return true;
          return false;
        },
        () => controller.abort(),
      );
      try {
        await expectCode(
          writeZip([{ name: 'big.bin', file: big, store: false }], dest, { signal: controller.signal }),
          'INTERRUPTED',
        );
      } finally {
        stop();
      }
      expect(await readFile(dest, 'utf8')).toBe('the previous archive');
      expect(await leftovers()).toEqual([]);
    });

    it('keeps an existing destination untouched when a source cannot be read', async () => {
      const dest = join(dir, 'existing.zip');
      await writeFile(dest, 'the previous archive');
      await expectCode(
        writeZip(
          [
            { name: 'a.json', data: '{}', store: false },
            { name: 'b.png', file: join(dir, 'missing.png'), store: true },
          ],
          dest,
        ),
        'OUTPUT_UNWRITABLE',
      );
      expect(await readFile(dest, 'utf8')).toBe('the previous archive');
      expect(await leftovers()).toEqual([]);
    });
  });

  describe('refusals', () => {
    it.each(['../evil.json', '/etc/passwd', 'a//b.json', '', 'a\\b.json', 'pages/.hidden', 'x/../y.json', 'a b.json'])(
      'refuses the entry name %j',
      async (name) => {
        const dest = join(dir, 'bad.zip');
        await expectCode(writeZip([{ name, data: 'x', store: false }], dest), 'BAD_ID');
        await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
        expect(await leftovers()).toEqual([]);
      },
    );

    it('refuses a duplicate entry name', async () => {
      const dest = join(dir, 'dup.zip');
      const entry = { name: 'prototypes.json', data: '[]', store: false };
      await expectCode(writeZip([entry, entry], dest), 'DUPLICATE_ENTRY');
      await expect(stat(dest)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('reports a missing output folder as OUTPUT_UNWRITABLE', async () => {
      await expectCode(writeZip([], join(dir, 'nope', 'out.zip')), 'OUTPUT_UNWRITABLE');
    });

    it('reports a read-only output folder as OUTPUT_UNWRITABLE', async () => {
      // Permissions do not stop root, and CI runs as root: there the folder is a read-only mount.
      const folder = join(dir, 'read-only');
      await mkdir(folder);
      const asRoot = process.getuid?.() === 0;
      if (asRoot) execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', folder], { stdio: 'ignore' });
      else await chmod(folder, 0o555);
      try {
        await expectCode(
          writeZip([{ name: 'a.json', data: '{}', store: false }], join(folder, 'out.zip')),
          'OUTPUT_UNWRITABLE',
        );
      } finally {
        if (asRoot) execFileSync('umount', [folder]);
        else await chmod(folder, 0o755);
      }
    });
  });
});
