import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatVerifyReport } from '../../src/cli/format-archive.js';
import type { VerifyProgress } from '../../src/verify/verify-archive.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { dataOffsetOf, flipByte, renameInPlace, truncate } from '../zip/zip-bytes.js';
import { sampleManifest, writeSampleArchive } from './sample-archive.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PNG_PATH = 'prototypes/4711/r17/pages/page0001.png';
const PAGE_PATH = 'prototypes/4711/r17/pages/page0001.json';

function kinds(report: { problems: Array<{ kind: string; path?: string }> }): string[] {
  return report.problems.map((p) => `${p.kind} ${p.path ?? ''}`.trim());
}

describe('verifyArchive', () => {
  it('passes an intact archive and reads every entry once', async () => {
    const path = await writeSampleArchive(dir);
    const progress: VerifyProgress[] = [];
    const report = await verifyArchive(path, { onProgress: (p) => progress.push(p) });
    expect(kinds(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.manifest?.complete).toBe(true);
    expect(report.checked).toBe(19); // 18 files and the manifest
    expect(report.bytes).toBeGreaterThan(2048);
    expect(progress.at(-1)).toMatchObject({ checked: 19, total: 19 });
    expect(formatVerifyReport(report)).toMatch(/^OK: export\.zip is intact and complete/);
  });

  it('passes an incomplete export whose contents match its manifest', async () => {
    const errors = [
      { source: '/rabbit/api/prototypes/12/pages/page2.json', status: 500, message: 'HTTP 500', attempts: 4 },
    ];
    const path = await writeSampleArchive(dir, { manifest: sampleManifest(errors) });
    const report = await verifyArchive(path);
    expect(report.ok).toBe(true);
    expect(report.manifest?.complete).toBe(false);
    expect(formatVerifyReport(report)).toMatch(/^OK, BUT INCOMPLETE: .*1 error$/);
  });

  it.each([
    { label: 'a stored entry (PNG)', entry: PNG_PATH, at: 500 },
    { label: 'a deflated entry (JSON)', entry: PAGE_PATH, at: 3 },
  ])('names $label whose data byte was flipped', async ({ entry, at }) => {
    const path = await writeSampleArchive(dir);
    await flipByte(path, (await dataOffsetOf(path, entry)) + at);
    const report = await verifyArchive(path);
    expect(report.ok).toBe(false);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]?.path).toBe(entry);
    expect(['crc-error', 'sha256-mismatch']).toContain(report.problems[0]?.kind);
    expect(formatVerifyReport(report)).toContain(entry);
    expect(formatVerifyReport(report).split('\n').at(-1)).toMatch(/^FAILED: export\.zip has 1 problem/);
  });

  it('catches content that matches its CRC but not the manifest (sha256 and size)', async () => {
    const manifest = sampleManifest();
    const record = manifest.prototypes['4711']?.revisions['17'];
    const page = record?.files.find((f) => f.path === PAGE_PATH);
    const png = record?.files.find((f) => f.path === PNG_PATH);
    if (!page || !png) throw new Error('sample lost its entries');
    page.sha256 = 'f'.repeat(64);
    png.size += 1;
    const report = await verifyArchive(await writeSampleArchive(dir, { manifest }));
    expect(kinds(report).sort()).toEqual([`sha256-mismatch ${PAGE_PATH}`, `size-mismatch ${PNG_PATH}`]);
  });

  it('reports an entry missing from the zip', async () => {
    const path = await writeSampleArchive(dir, { omit: [PAGE_PATH] });
    expect(kinds(await verifyArchive(path))).toEqual([`missing ${PAGE_PATH}`]);
  });

  it('reports an entry the manifest does not list', async () => {
    const path = await writeSampleArchive(dir, { extra: [{ name: 'notes.txt', data: 'hi', store: false }] });
    expect(kinds(await verifyArchive(path))).toEqual(['unlisted notes.txt']);
  });

  it('reports a name the zip holds twice', async () => {
    const path = await writeSampleArchive(dir, {
      extra: [{ name: 'prototypes.jsoX', data: '[4711,12]', store: false }],
    });
    await renameInPlace(path, 'prototypes.jsoX', 'prototypes.json');
    expect(kinds(await verifyArchive(path))).toEqual(['duplicate prototypes.json']);
  });

  it('reports an unsafe entry name without crashing', async () => {
    const path = await writeSampleArchive(dir, { extra: [{ name: 'zz/evil.txt', data: 'x', store: false }] });
    await renameInPlace(path, 'zz/evil.txt', '../evil.txt');
    const report = await verifyArchive(path);
    expect(kinds(report)).toEqual(['unsafe-name ../evil.txt']);
    expect(report.ok).toBe(false);
  });

  it.each([
    { label: 'absent', manifest: null, kind: 'manifest-missing' },
    { label: 'not JSON', manifest: '{"formatVersion": 1,', kind: 'manifest-invalid' },
    {
      label: 'missing its files',
      manifest: JSON.stringify({ ...sampleManifest(), files: undefined }),
      kind: 'manifest-invalid',
    },
    {
      label: 'from a newer tool',
      manifest: JSON.stringify({ ...sampleManifest(), formatVersion: 2 }),
      kind: 'manifest-invalid',
    },
    {
      label: 'with a bad sha256',
      manifest: JSON.stringify(sampleManifest()).replace(/"sha256":"[0-9a-f]{64}"/, '"sha256":"ABC"'),
      kind: 'manifest-invalid',
    },
  ])('reports a manifest that is $label', async ({ manifest, kind }) => {
    const report = await verifyArchive(await writeSampleArchive(dir, { manifest }));
    expect(report.ok).toBe(false);
    expect(report.manifest).toBeNull();
    expect(report.problems.map((p) => p.kind)).toEqual([kind]);
    expect(report.checked).toBeGreaterThan(0); // entries are still CRC-checked
  });

  it.each([
    { label: 'a truncated download', make: async (p: string) => truncate(p, Math.floor((await stat(p)).size / 2)) },
    { label: 'a text file', make: (p: string) => writeFile(p, 'Dear support, here is my export.\n') },
  ])('reports $label as not-a-zip in one line', async ({ make }) => {
    const path = await writeSampleArchive(dir);
    await make(path);
    const report = await verifyArchive(path);
    expect(report.ok).toBe(false);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]?.kind).toBe('not-a-zip');
    expect(report.problems[0]?.detail).toContain('export.zip');
    expect(report.problems[0]?.detail).not.toContain('\n');
    const printed = formatVerifyReport(report);
    expect(printed.split('\n')).toHaveLength(1);
    expect(printed).toContain(report.problems[0]?.detail);
  });
});
