import { createHash } from 'node:crypto';
import { mkdtemp, open, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { checkWacz } from '../../src/convert/wacz/check-wacz.js';
import { SortedLines } from '../../src/convert/wacz/sorted-lines.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { readArchive } from '../helpers/archive.js';
import { plainZip } from '../helpers/plain-zip.js';
import { expectedFrom, type ExpectedPrototype } from './expected.js';
import { exportSample } from './helpers.js';
import { runTool } from './tools.js';
import { python } from '../helpers/tools.js';

/** The WACZ judged by Python's zipfile, zlib and hashlib (package_judge.py), not by the code that wrote it. */
const JUDGE = fileURLToPath(new URL('./package_judge.py', import.meta.url));

interface Judged {
  faults: string[];
  names: string[];
  wacz_version: string;
  profile: string;
  records: Record<string, number>;
  urls: string[];
  statuses: string[];
  bounded: number;
  indexed: number;
  warcinfo: string;
  pagesHeader: Record<string, unknown>;
  pages: { id: string; url: string; ts: string; title: string; text: string }[];
}

async function judge(wacz: string): Promise<Judged> {
  const run = await runTool(python(), [JUDGE, 'wacz', wacz]);
  if (run.code !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Judged;
}

let dir: string;
let archive: string;
let expected: ExpectedPrototype[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-wacz-'));
  // Every view the service offers, the older ones (`?mode=sketched|plain`) included.
  archive = await exportSample(dir, new Set(['json', 'html', 'png', 'xhtml-sketched', 'xhtml-plain'] as const));
  expected = await expectedFrom(archive);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('convert --to wacz', () => {
  it('writes a WACZ 1.1.1 whose digests, index offsets and records Python finds as it claims, checked by --check too', async () => {
    const out = join(dir, 'wacz');
    const report = await convertArchive({ archive, out, to: 'wacz', check: true });
    expect(report.package?.file).toBe('archive.wacz');
    expect(report.package?.checked?.files).toBe(4);
    const judged = await judge(join(out, 'archive.wacz'));
    expect(judged.faults).toEqual([]);
    expect(judged.names).toEqual([
      'archive/data.warc.gz',
      'datapackage-digest.json',
      'datapackage.json',
      'indexes/index.cdx',
      'pages/pages.jsonl',
    ]);
    expect([judged.profile, judged.wacz_version]).toEqual(['data-package', '1.1.1']);

    // One response record per body the service served; the viewer's generated files stay out.
    const { manifest } = await readArchive(archive);
    const served = allFileEntries(manifest).filter((entry) => entry.source !== 'generated');
    expect(judged.records).toEqual({ warcinfo: 1, response: served.length });
    expect(judged.indexed).toBe(served.length);
    expect(report.package?.checked?.entries).toBe(served.length);
    expect(judged.statuses).toEqual(['HTTP/1.1 200 OK']);
    expect(judged.urls.filter((url) => /api_key/i.test(url))).toEqual([]);
    const origin = new URL(manifest.source.baseUrl).origin;
    expect(judged.urls).toContain(`${origin}/rabbit/api/prototypes.json`);
    expect(judged.urls.some((url) => url.endsWith('.xhtml?mode=sketched'))).toBe(true);
    expect(judged.urls.some((url) => url.endsWith('.xhtml?mode=plain'))).toBe(true);
    expect(judged.urls.some((url) => url.endsWith('.png'))).toBe(true);
    expect(judged.urls.some((url) => url.startsWith(`${origin}/rabbit/static/`))).toBe(true);
    // This archive records when each body was fetched: no record is dated by the run's bounds.
    expect(judged.bounded).toBe(0);
    expect(judged.warcinfo).toContain(`source: ${manifest.source.baseUrl}`);
    expect(judged.warcinfo).toMatch(/^software: rabbit-export /m);
  });

  it('lists every wireframe page with its XHTML URL, title and words, under a header that says so', async () => {
    const out = join(dir, 'pages');
    await convertArchive({ archive, out, to: 'wacz' });
    const judged = await judge(join(out, 'archive.wacz'));
    expect(judged.pagesHeader).toEqual({ format: 'json-pages-1.0', id: 'pages', title: 'All pages', hasText: true });
    const wanted = expected.flatMap((proto) => proto.pages.map((page) => ({ proto, page })));
    expect(judged.pages.map((line) => line.id).sort()).toEqual(
      wanted.map(({ proto, page }) => `${proto.id}/${page.id}`).sort(),
    );
    for (const { proto, page } of wanted) {
      const line = judged.pages.find((each) => each.id === `${proto.id}/${page.id}`)!;
      expect(line.url).toMatch(new RegExp(`/rabbit/api/prototypes/${proto.id}/pages/${page.id}\\.html$`));
      expect(line.title).toBe(`${proto.name}: ${page.name}`);
      expect(Number.isNaN(Date.parse(line.ts))).toBe(false);
      const labels = [...page.layers.flatMap((layer) => layer.elements), ...page.elements]
        .map((element) => element.json.text)
        .filter((text): text is string => typeof text === 'string' && text.trim() !== '');
      for (const label of labels) expect(line.text).toContain(label.trim());
    }
  });

  it('dates the records of an archive without fetch times at the run start, and says the run bounds them', async () => {
    const { entries } = await readArchive(archive);
    const files = [...entries.entries()].map(([name, entry]) => ({ name, data: entry.data }));
    const manifestFile = files.find((file) => file.name === 'manifest.json')!;
    const manifest = JSON.parse(manifestFile.data.toString('utf8')) as Record<string, unknown>;
    manifestFile.data = Buffer.from(
      JSON.stringify(manifest, (key, value: unknown) => (key === 'fetchedAt' ? undefined : value)),
    );
    expect(manifestFile.data.includes('fetchedAt')).toBe(false);
    const old = join(dir, 'old.zip');
    await writeFile(old, plainZip(files));
    const out = join(dir, 'old');
    const report = await convertArchive({ archive: old, out, to: 'wacz', check: true });
    const judged = await judge(join(out, 'old.wacz'));
    expect(judged.faults).toEqual([]);
    expect(judged.bounded).toBe(judged.records.response);
    expect(report.notes.some((note) => note.includes("dated at the export's start"))).toBe(true);
  });

  it('--check refuses a WACZ whose WARC was changed after it was written', async () => {
    const out = join(dir, 'tampered');
    const report = await convertArchive({ archive, out, to: 'wacz' });
    const file = join(out, report.package!.file);
    const bytes = await readFile(file);
    // A byte well inside the stored WARC (the first zip entry), past its local header.
    const handle = await open(file, 'r+');
    await handle.write(Buffer.from([bytes[2000]! ^ 0xff]), 0, 1, 2000);
    await handle.close();
    const error = await checkWacz(file).catch((caught: unknown) => caught);
    expect(isRabbitError(error) && error.code).toBe('PACKAGE_INVALID');
  });
});

describe('checkWacz when its work folder cannot be made', () => {
  it('closes the package it opened', async () => {
    const file = join(dir, 'no-work-folder.wacz');
    await writeFile(file, plainZip([{ name: 'datapackage.json', data: Buffer.from('{}') }]));
    // The package named through /proc/self/fd: it opens as the file, and its folder takes no work folder.
    const held = await open(file, 'r');
    const openOnFile = async (): Promise<number> => {
      let count = 0;
      for (const fd of await readdir('/proc/self/fd'))
        if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === file) count++;
      return count;
    };
    try {
      const error = await checkWacz(`/proc/self/fd/${held.fd}`).catch((caught: unknown) => caught);
      expect((error as NodeJS.ErrnoException).code).toMatch(/^E/);
      expect(await openOnFile()).toBe(1);
    } finally {
      await held.close();
    }
  });
});

describe('checkWacz on an index too large for one sort run', () => {
  it('closes the runs it was merging when the WARC does not hold what the index points at', async () => {
    // More lines than one run of the sort holds: the index is spilled into runs and read back merged.
    const lines = Array.from(
      { length: 70_000 },
      (_, i) =>
        `k 20260101000000 {"url":"u","digest":"d","offset":"${String(i).padStart(6, '0')}","length":"1","filename":"data.warc"}`,
    );
    const index = Buffer.from(`${lines.join('\n')}\n`);
    const warc = Buffer.alloc(0);
    const sum = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const resources = [
      { path: 'archive/data.warc', hash: sum(warc), bytes: warc.length },
      { path: 'indexes/index.cdx', hash: sum(index), bytes: index.length },
    ];
    const datapackage = Buffer.from(JSON.stringify({ resources }));
    const file = join(dir, 'large-index.wacz');
    await writeFile(
      file,
      plainZip([
        { name: 'datapackage.json', data: datapackage },
        { name: 'datapackage-digest.json', data: Buffer.from(JSON.stringify({ hash: sum(datapackage) })) },
        { name: 'archive/data.warc', data: warc },
        { name: 'indexes/index.cdx', data: index },
      ]),
    );
    const error = await checkWacz(file).catch((caught: unknown) => caught);
    expect(isRabbitError(error) && error.code).toBe('PACKAGE_INVALID');
    expect((error as Error).message).toContain('the index points at records');
    const held: string[] = [];
    for (const fd of await readdir('/proc/self/fd')) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
      if (target.includes('.wacz-check-')) held.push(target);
    }
    expect(held).toEqual([]);
  });
});

describe('the fetch time the WACZ dates its records by', () => {
  it('is recorded in the manifest for every body the export fetched, within the run', async () => {
    const { manifest } = await readArchive(archive);
    const [start, end] = [Date.parse(manifest.startedAt), Date.parse(manifest.finishedAt)];
    const fetched = allFileEntries(manifest).filter((entry) => entry.source !== 'generated');
    expect(fetched.length).toBeGreaterThan(50);
    for (const entry of fetched) {
      const at = Date.parse(entry.fetchedAt ?? '');
      expect(at >= start && at <= end, `${entry.path} ${entry.fetchedAt}`).toBe(true);
    }
  });
});

describe('the index sorted through the work folder', () => {
  it('gives the lines in byte order however many runs they were spilled in', async () => {
    const work = await mkdtemp(join(dir, 'runs-'));
    const lines = Array.from({ length: 23 }, (_, i) => `k${(i * 7919) % 101} ${'é'.repeat(i % 3)}${i}`);
    lines.push('Z upper', 'a lower', 'a lower');
    const sorted = new SortedLines(work, 4);
    for (const line of lines) await sorted.add(line);
    const out: string[] = [];
    for await (const line of sorted.sorted()) out.push(line);
    expect(out).toEqual([...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });

  it('keeps lines longer than a run and than a read of the merge whole, whatever the run is cut by', async () => {
    const work = await mkdtemp(join(dir, 'long-runs-'));
    // A run of 64 bytes: most lines end a run, some are longer than the run's buffer, and two are
    // longer than the merge's reads (64 KiB), so the merge must join a line across reads.
    const lines = [
      ...Array.from({ length: 40 }, (_, i) => `u${(i * 31) % 17} ${'x'.repeat((i * 13) % 70)}`),
      `m ${'é'.repeat(50_000)}`,
      `b ${'y'.repeat(150_000)}`,
      '',
      'a',
    ];
    const sorted = new SortedLines(work, 1000, 64);
    for (const line of lines) await sorted.add(line);
    const out: string[] = [];
    for await (const line of sorted.sorted()) out.push(line);
    expect(out).toEqual([...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });
});
