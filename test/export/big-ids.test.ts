import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIG_IDS, startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount, type ExportResult } from '../../src/export/export-account.js';
import { allFileEntries, type Manifest } from '../../src/manifest/types.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { readArchive } from '../helpers/archive.js';

/** The ids JSON.parse would have read instead: 2^53, 2^53 + 4, 2^53 + 4 again (ties round to even). */
const NEIGHBOURS = ['9007199254740992', '9007199254740994', '9007199254740996'];
const PROTO = String(BIG_IDS.prototype);
const DISCUSSIONS = BIG_IDS.discussions.map(String);

let service: FakeService;
let dir: string;
let result: ExportResult;
let manifest: Manifest;
let entries: Map<string, { data: Buffer; method: number }>;

beforeAll(async () => {
  service = await startFakeService({ seed: 1, dataset: { bigIds: true } });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-big-ids-'));
  const out = join(dir, 'account.zip');
  result = await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 4 });
  ({ manifest, entries } = await readArchive(out));
});
afterAll(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

describe('ids past 2^53', () => {
  it('are requested by the digits the service wrote, never by a neighbour', () => {
    expect(result.complete).toBe(true);
    expect(result.errorCount).toBe(0);
    const api = `/rabbit/api/prototypes/${PROTO}`;
    expect(service.stats.byPath.get(`${api}.json`)).toBe(1);
    for (const id of DISCUSSIONS) expect(service.stats.byPath.get(`${api}/discussions/${id}.json`), id).toBe(1);
    const requested = [...service.stats.byPath.keys()].join('\n');
    for (const neighbour of NEIGHBOURS) expect(requested).not.toContain(neighbour);
  });

  it('are stored under their digits in entry paths and the manifest', async () => {
    const state = manifest.prototypes[PROTO];
    expect(state?.complete).toBe(true);
    const paths = allFileEntries(manifest).map((file) => file.path);
    for (const id of DISCUSSIONS) {
      const path = `prototypes/${PROTO}/r1/discussions/${id}.json`;
      expect(paths).toContain(path);
      const body = JSON.parse(entries.get(path)?.data.toString('utf8') ?? 'null') as { title: string };
      expect(body.title).toMatch(/past 2\^53/);
    }
    for (const neighbour of NEIGHBOURS) expect(paths.join('\n')).not.toContain(neighbour);
    // The list is archived as served: its bytes still hold the digits.
    expect(entries.get(`prototypes/${PROTO}/r1/discussions.json`)?.data.toString('utf8')).toBe(
      `[${DISCUSSIONS.join(',')}]`,
    );
    expect((await verifyArchive(join(dir, 'account.zip'))).ok).toBe(true);
  });

  it('are shown by their digits in the offline viewer', () => {
    const overview = entries.get(`overview/prototype-${PROTO}.html`)?.data.toString('utf8') ?? '';
    for (const id of DISCUSSIONS) expect(overview).toContain(`id="discussion-${id}"`);
    expect(overview).toContain('First past 2^53');
    const index = entries.get('index.html')?.data.toString('utf8') ?? '';
    expect(index).toContain(`prototype-${PROTO}.html`);
  });

  it('(after the export, whose request counts the others read) the fake service lists them as JSON numbers with every digit', async () => {
    const get = async (rest: string): Promise<string> =>
      (await fetch(`${service.baseUrl}/rabbit/api/${rest}?api_key=${service.keys.readOnly}`)).text();
    expect(await get('prototypes.json')).toContain(`,${PROTO}`);
    expect(await get(`prototypes/${PROTO}/discussions.json`)).toBe(`[${DISCUSSIONS.join(',')}]`);
    expect(await get(`prototypes/${PROTO}/discussions/${DISCUSSIONS[1]}.json`)).toContain(
      `"id":${DISCUSSIONS[1]},"prototypeId":${PROTO},`,
    );
  });
});
