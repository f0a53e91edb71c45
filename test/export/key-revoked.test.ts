import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  datasetForResources,
  startFakeService,
  type FakeService,
  type FakeServiceOptions,
} from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { backupAccount } from '../../src/backup/backup-account.js';
import { readArchive } from '../helpers/archive.js';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { python } from '../helpers/tools.js';

// issue 34, finding 6: a key revoked in the middle of a run used to cost one refused request per
// resource of the account, each recorded as "answered 401". Now the first refusal is checked, and a
// refused key stops within twice the concurrency.

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(options: FakeServiceOptions): Promise<FakeService> {
  const service = await startFakeService(options);
  services.push(service);
  return service;
}

/**
 * Every entry's sha256 as Python's zipfile reads it, manifest.json (the run's own times) left out:
 * one object for each of the two zips, both read by one Python process (each start-up of Python
 * and its zipfile costs a tenth of a second).
 */
type Digests = Record<string, string>;
async function entryDigests(...zips: [string, string]): Promise<[Digests, Digests]> {
  const script = [
    'import hashlib, json, sys, zipfile',
    'def digests(path):',
    '    z = zipfile.ZipFile(path)',
    '    return {i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist() if i.filename != "manifest.json"}',
    'print(json.dumps([digests(path) for path in sys.argv[1:]]))',
  ].join('\n');
  const { stdout } = await promisify(execFile)(python(), ['-c', script, ...zips], { maxBuffer: 64 * 1024 * 1024 });
  const both = JSON.parse(stdout) as [Digests, Digests];
  expect(both).toHaveLength(2);
  return both;
}

const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;

describe('a key revoked in the middle of a run', () => {
  // Big enough that the old behaviour, a refusal per resource, overshoots the bound of 32 many times
  // over (more than two hundred refused requests at this size).
  it('stops a 1,000-resource run within 2 x concurrency requests, names the key, and the same command with a working key resumes byte for byte', async () => {
    const service = await serve({ seed: 34, dataset: datasetForResources(1_000) });
    service.setRevocation({ key: service.keys.readOnly, afterRequests: 300 });
    const out = join(await tempDir(), 'revoked.zip');
    const args = ['export', '--out', out, '--concurrency', '16'];
    const first = await runCli(args, {
      register: registerExport,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(first.code).toBe(3);
    // Counted at the service: every request that carried the key once it was revoked, the check included.
    const wasted = service.store.keyRing.refusedAfterRevocation;
    expect(wasted).toBeGreaterThan(0);
    expect(wasted).toBeLessThanOrEqual(32);
    expect(first.stderr).toContain('the service refused the API key on entry 1 of RABBIT_API_KEY from ');
    expect(first.stderr).toMatch(/\(request \d+ of this run, HTTP 401\)/);
    expect(first.stderr).toContain('run the same command again to resume');
    expect(first.stdout + first.stderr).not.toContain(service.keys.readOnly);
    const { manifest } = await readArchive(out);
    expect(manifest.complete).toBe(false);
    expect(new Set(manifest.errors.map((error) => error.code))).toEqual(new Set(['KEY_REFUSED']));
    expect(manifest.errors.length).toBeLessThan(100);
    const work = join(dirname(out), '.revoked.zip.rabbit-work');
    expect(existsSync(join(work, 'resumable.json'))).toBe(true);

    // The key replaced by one that works: the same command, no --force, replaces the archive.
    const env = { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl };
    const second = await runCli(args, { register: registerExport, env });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('bodies saved by an earlier run that did not finish will be checked and reused');
    expect(existsSync(work)).toBe(false);
    const clean = join(await tempDir(), 'clean.zip');
    const uninterrupted = await runCli(['export', '--out', clean, '--concurrency', '16'], {
      register: registerExport,
      env,
    });
    expect(uninterrupted.code).toBe(0);
    const [want, got] = await entryDigests(clean, out);
    expect(Object.keys(want).length).toBeGreaterThan(1_000);
    expect(got).toEqual(want);
  }, 240_000);

  it('--json says which key and since when; the summary is exit 3 with the same resumable state', async () => {
    const service = await serve({ seed: 5 });
    service.setRevocation({ key: service.keys.readOnly, afterRequests: 40 });
    const out = join(await tempDir(), 'json.zip');
    const run = await runCli(['export', '--out', out, '--json', '--quiet'], {
      register: registerExport,
      env: { RABBIT_API_KEY: `${service.keys.readOnly}`, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(3);
    const summary = lastJson(run.stdout);
    expect(summary).toMatchObject({ type: 'summary', ok: false, exitCode: 3, complete: false });
    const refused = summary['keysRefused'] as Record<string, unknown>[];
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ key: 'entry 1 of RABBIT_API_KEY', status: 401 });
    expect(refused[0]?.['request']).toBeGreaterThan(40);
    expect(Number.isNaN(Date.parse(refused[0]?.['since'] as string))).toBe(false);
    expect(existsSync(join(dirname(out), '.json.zip.rabbit-work', 'resumable.json'))).toBe(true);
    expect(service.store.keyRing.refusedAfterRevocation).toBeLessThanOrEqual(2 * 8);
  }, 60_000);

  it('with two keys, the revoked one stops its prototypes, recorded as such, and the other key completes its own', async () => {
    const service = await serve({ seed: 5 });
    const [revoked, working] = ['3', '17'].map((id) => service.keys.perPrototype[id] as string) as [string, string];
    service.setRevocation({ key: revoked, afterRequests: 10 });
    const out = join(await tempDir(), 'two.zip');
    const result = await exportAccount({ baseUrl: service.baseUrl, keys: [revoked, working], out, concurrency: 4 });
    expect(result.complete).toBe(false);
    expect(result.keysRefused).toHaveLength(1);
    expect(result.keysRefused?.[0]).toMatchObject({ keyNumber: 1, status: 401 });
    expect(service.store.keyRing.refusedAfterRevocation).toBeLessThanOrEqual(2 * 4);
    const { manifest } = await readArchive(out);
    // Prototype 3 is incomplete, each error naming key number 1; prototype 17 is whole.
    expect(manifest.errors.length).toBeGreaterThan(0);
    for (const error of manifest.errors) {
      expect(error.code).toBe('KEY_REFUSED');
      expect(error.source.startsWith('/rabbit/api/prototypes/3')).toBe(true);
      expect(error.message).toContain('API key number 1');
    }
    const clean = join(await tempDir(), 'only-17.zip');
    const alone = await exportAccount({ baseUrl: service.baseUrl, keys: [working], out: clean });
    expect(alone.complete).toBe(true);
    const [got, want] = await entryDigests(out, clean);
    const of17 = (digests: Record<string, string>): Record<string, string> =>
      Object.fromEntries(Object.entries(digests).filter(([name]) => name.startsWith('prototypes/17/')));
    expect(Object.keys(of17(want)).length).toBeGreaterThan(10);
    expect(of17(got)).toEqual(of17(want));
    expect(existsSync(join(dirname(out), '.two.zip.rabbit-work', 'resumable.json'))).toBe(true);
  }, 60_000);

  it('a 403 on one discussion the key may not read stays that resource failure: one check, and the run goes on', async () => {
    const discussion = '/rabbit/api/prototypes/3/discussions/1.json';
    const service = await serve({ seed: 5, faults: { paths: [{ path: discussion, kind: '403' }] } });
    const out = join(await tempDir(), 'forbidden.zip');
    const result = await exportAccount({ baseUrl: service.baseUrl, keys: [service.keys.readOnly], out });
    expect(result.keysRefused).toBeUndefined();
    expect(result.errors).toEqual([expect.objectContaining({ source: discussion, status: 403, code: 'HTTP_STATUS' })]);
    expect(result.errorCount).toBe(1);
    // The list of prototypes: once to start, once to check the key after the 403.
    expect(service.stats.byPath.get('/rabbit/api/prototypes.json')).toBe(2);
    const { manifest } = await readArchive(out);
    expect(Object.keys(manifest.prototypes).length).toBeGreaterThan(1);
    expect(existsSync(join(dirname(out), '.forbidden.zip.rabbit-work'))).toBe(false);
  }, 60_000);

  it('backup stops the same way: an incomplete archive, the key refused, few requests spent', async () => {
    const service = await serve({ seed: 5 });
    service.setRevocation({ key: service.keys.readOnly, afterRequests: 40 });
    const dir = await tempDir();
    const backup = await backupAccount({ dir, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    expect(backup.export.complete).toBe(false);
    expect(backup.export.keysRefused?.[0]).toMatchObject({ keyNumber: 1 });
    expect(service.store.keyRing.refusedAfterRevocation).toBeLessThanOrEqual(2 * 8);
  }, 60_000);

  it('serve --revoke-key-after N answers the read-only key N times, then 401, and the read-write key still', async () => {
    const { child, done } = startCli(['serve', '--json', '--prototypes', '1', '--revoke-key-after', '2']);
    const info = await new Promise<{ baseUrl: string; keys: { readOnly: string; readWrite: string } }>(
      (resolve, reject) => {
        let first = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          first += chunk.toString();
          if (first.includes('\n')) resolve(JSON.parse(first.split('\n')[0] as string));
        });
        child.on('close', () => reject(new Error(`serve ended early: ${first}`)));
      },
    );
    try {
      const status = async (key: string): Promise<number> =>
        (await fetch(`${info.baseUrl}/rabbit/api/prototypes.json?api_key=${key}`)).status;
      const readOnly = [];
      for (let i = 0; i < 4; i++) readOnly.push(await status(info.keys.readOnly));
      expect(readOnly).toEqual([200, 200, 401, 401]);
      expect(await status(info.keys.readWrite)).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await done;
    }
  });
});
