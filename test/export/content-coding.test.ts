import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeService,
  type CompressionOptions,
  type FakeService,
  type ServedCoding,
} from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { walkService } from '../helpers/oracle.js';
import { expectArchiveMatches } from '../helpers/exact.js';
import { requireTool } from '../helpers/tools.js';

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** A small account: the awkward sample prototypes and one ordinary one. */
const DATASET = { prototypes: 1, pagesPerPrototype: 2, elementsPerPage: 2, layersPerPrototype: 1 };

/**
 * Every archive the file writes, kept to the end for Info-ZIP's unzip, which tests them all in one
 * process: one spawn of this worker per export cost more than the test of the archive.
 */
let archives: string;
let exports = 0;
const written: string[] = [];
beforeAll(async () => {
  archives = await mkdtemp(join(tmpdir(), 'content-coding-'));
});
afterAll(async () => {
  try {
    if (written.length === 0) return;
    // Info-ZIP must be installed: a missing unzip fails the file here. The wildcard is unzip's own.
    requireTool('unzip');
    const unzip = spawnSync('unzip', ['-tq', join(archives, '*.zip')], { encoding: 'utf8' });
    if (unzip.error) throw unzip.error;
    expect(unzip.status, `${unzip.stdout}${unzip.stderr}`).toBe(0);
    for (const out of written) expect(unzip.stdout).toContain(`No errors detected in compressed data of ${out}.`);
  } finally {
    await rm(archives, { recursive: true, force: true });
  }
});

async function exportFrom(svc: FakeService, extra: Partial<Parameters<typeof exportAccount>[0]> = {}) {
  const out = join(archives, `${++exports}.zip`);
  const result = await exportAccount({
    out,
    baseUrl: svc.baseUrl,
    keys: [svc.keys.readOnly],
    retry: { baseDelayMs: 5 },
    ...extra,
  });
  return { out, result };
}

/** Sound to our verify, and later to Info-ZIP's unzip (afterAll). */
async function expectSound(out: string): Promise<void> {
  const report = await verifyArchive(out);
  expect(report.ok).toBe(true);
  written.push(out);
}

/** Byte for byte what `served` holds but `missing` (see expectArchiveMatches), and sound. */
async function expectExactAndSound(out: string, served: Map<string, Buffer>, missing: string[] = []): Promise<void> {
  await expectArchiveMatches(out, served, missing);
  await expectSound(out);
}

const SINGLE: ServedCoding[] = ['gzip', 'x-gzip', 'deflate', 'deflate-raw', 'br', 'identity'];
const STACKS: ServedCoding[][] = [
  ['gzip', 'br'],
  ['deflate-raw', 'gzip'],
  ['br', 'identity', 'deflate'],
];

describe('exports from a compressing service', () => {
  // One service for every way of compressing: what it serves decoded does not depend on the coding,
  // so it is walked once, plain. The services with faults below are made from the same dataset and
  // seed, which serve the same bytes whatever their port: that walk is their oracle too.
  let coding: FakeService;
  let plain: Map<string, Buffer>;
  beforeAll(async () => {
    coding = await startFakeService({ dataset: DATASET });
    plain = await walkService(coding.baseUrl, coding.keys.readOnly);
  });
  afterAll(() => coding.close());

  it.each(
    (['asked', 'always'] as const).flatMap((when) =>
      [...SINGLE.map((coding) => [coding]), ...STACKS].map((codings): [string, CompressionOptions] => [
        `${when}:${codings.join(',')}`,
        { when, codings },
      ]),
    ),
  )('stores the decoded bodies byte for byte (%s)', async (_name, compression) => {
    coding.setCompression(compression);
    const { out, result } = await exportFrom(coding);
    expect(result.complete).toBe(true);
    const compressed = compression.codings?.some((coding) => coding !== 'identity');
    // JSON and XHTML shrink; the figures say so.
    const wire = `${result.wireBytes} bytes on the wire for ${result.stats.bytes} stored`;
    expect(
      compressed ? result.wireBytes < result.stats.bytes * 0.8 : result.wireBytes === result.stats.bytes,
      wire,
    ).toBe(true);
    await expectExactAndSound(out, plain);
  });

  it('picks the coding the client likes best when asked without a list of codings', async () => {
    coding.setCompression({ when: 'asked' });
    const { out, result } = await exportFrom(coding);
    expect(result.complete).toBe(true);
    expect(result.wireBytes).toBeLessThan(result.stats.bytes * 0.8);
    await expectExactAndSound(out, plain);
  });

  it('stops a decompression bomb at the decoded cap, records BODY_TOO_LARGE, and exports the rest', async () => {
    const bomb = '/rabbit/api/prototypes/3/pages/page0001/elements.json';
    service = await startFakeService({
      dataset: DATASET,
      compression: { when: 'always', codings: ['gzip'] },
      faults: { paths: [{ path: bomb, kind: 'coding-bomb' }] },
    });
    const cap = 2 * 1024 * 1024;
    const { out, result } = await exportFrom(service, { caps: { json: cap } });
    expect(result.complete).toBe(false);
    expect(result.errors).toEqual([expect.objectContaining({ source: bomb, code: 'BODY_TOO_LARGE', attempts: 1 })]);
    expect(result.errors[0]?.message).toContain(`decoded body exceeds the cap of ${cap} bytes`);
    // Not retried: a bomb stays a bomb.
    expect(service.stats.byPath.get(bomb)).toBe(1);
    // The elements the list would have named are missing with it; all else is there, exact.
    const lost = [...plain.keys()].filter(
      (source) => source === bomb || source.startsWith('/rabbit/api/prototypes/3/pages/page0001/elements/'),
    );
    await expectExactAndSound(out, plain, lost);
  });

  it('retries a body that does not decode, then records it as BODY_UNDECODABLE', async () => {
    const corrupt = '/rabbit/api/prototypes/3/discussions/1.json';
    service = await startFakeService({
      dataset: DATASET,
      faults: { paths: [{ path: corrupt, kind: 'corrupt-coding' }] },
    });
    const { out, result } = await exportFrom(service);
    expect(result.complete).toBe(false);
    expect(result.errors).toEqual([
      expect.objectContaining({ source: corrupt, code: 'BODY_UNDECODABLE', attempts: 5 }),
    ]);
    expect(service.stats.byPath.get(corrupt)).toBe(5);
    await expectExactAndSound(out, plain, [corrupt]);
  });

  it('gets through a corrupt or cut-short compressed body that is whole on the next attempt', async () => {
    const corrupt = '/rabbit/api/prototypes/3/discussions/1.json';
    const cut = '/rabbit/api/prototypes/3/pages/page0001.html';
    service = await startFakeService({
      dataset: DATASET,
      compression: { when: 'asked', codings: ['br'] },
      faults: {
        paths: [
          { path: corrupt, kind: 'corrupt-coding', times: 2 },
          // Content-Length of the encoded body, then half of it.
          { path: cut, kind: 'truncate', times: 1 },
        ],
      },
    });
    const { out, result } = await exportFrom(service);
    expect(result.errors).toEqual([]);
    expect(result.stats.retries).toBe(3);
    expect(service.stats.byPath.get(corrupt)).toBe(3);
    expect(service.stats.byPath.get(cut)).toBe(2);
    await expectExactAndSound(out, plain);
  });
});
