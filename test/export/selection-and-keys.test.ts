import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { manifestOf, readArchive } from '../helpers/archive.js';
import { isRabbitError } from '../../src/core/errors.js';
import { runCli } from '../helpers/cli.js';
import { comparable } from './since-helpers.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const exportWith = async (out: string, keys: string[]) => {
  const result = await exportAccount({ out: join(dir, out), baseUrl: service.baseUrl, keys, concurrency: 4 });
  return { ...result, manifest: await manifestOf(result.out) };
};

/** Entries below prototypes/: what a key merge must leave exactly as a single full export has it. */
async function prototypeEntries(path: string, only?: string[]): Promise<Map<string, Buffer>> {
  const { entries } = await readArchive(path);
  const out = new Map<string, Buffer>();
  for (const [name, entry] of entries) {
    const id = /^prototypes\/(\d+)\//.exec(name)?.[1];
    if (id !== undefined && (!only || only.includes(id))) out.set(name, entry.data);
  }
  return out;
}

async function expectNoKeyIn(paths: string[], texts: string[] = []): Promise<void> {
  const keys = [service.keys.readOnly, ...Object.values(service.keys.perPrototype)];
  const blobs = [...(await Promise.all(paths.map((p) => readFile(p)))), ...texts.map((t) => Buffer.from(t))];
  for (const blob of blobs) for (const key of keys) expect(blob.includes(key), 'an API key was written').toBe(false);
}

describe('several keys', () => {
  it('a refused key among several costs only its own prototypes: incomplete, named by position', async () => {
    const keys = [
      service.keys.perPrototype['3'] as string,
      service.keys.invalid,
      service.keys.perPrototype['17'] as string,
    ];
    const result = await exportWith('partly.zip', keys);
    expect(result.complete).toBe(false);
    expect(Object.keys((await manifestOf(result.out)).prototypes).sort()).toEqual(['17', '3']);
    expect((await manifestOf(result.out)).errors).toEqual([
      expect.objectContaining({
        source: '/rabbit/api/prototypes.json',
        code: 'KEY_REFUSED',
        message: expect.stringContaining('API key number 2'),
      }),
    ]);
    expect(JSON.stringify(await manifestOf(result.out))).not.toContain(service.keys.invalid);
  });

  it('fails when every key is refused', async () => {
    const error = await exportWith('none.zip', [service.keys.invalid, service.keys.invalid.replace(/.$/, 'x')]).catch(
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'KEY_REFUSED')).toBe(true);
  });

  it('two keys with overlapping prototypes merge exactly: each prototype once, as one full export has it', async () => {
    await exportWith('full.zip', [service.keys.readOnly]);
    service.stats.reset();
    const merged = await exportWith('merged.zip', [service.keys.perPrototype['1001'] as string, service.keys.readOnly]);
    expect(merged.complete).toBe(true);
    for (const id of service.store.prototypeIds())
      expect(service.stats.byPath.get(`/rabbit/api/prototypes/${id}.json`), id).toBe(1);

    const full = await readArchive(join(dir, 'full.zip'));
    const { manifest, entries } = await readArchive(join(dir, 'merged.zip'));
    expect(comparable(manifest)).toMatchObject({
      prototypes: (comparable(full.manifest) as { prototypes: object }).prototypes,
    });
    expect(await prototypeEntries(join(dir, 'merged.zip'))).toEqual(await prototypeEntries(join(dir, 'full.zip')));
    // Each key's list is kept as served, numbered by the key's position: nothing derived from the key.
    expect(manifest.files.map((f) => f.path).filter((path) => path.startsWith('prototypes'))).toEqual([
      'prototypes.json',
      'prototypes.key2.json',
    ]);
    expect(JSON.parse(entries.get('prototypes.json')?.data.toString() ?? '')).toEqual([1001]);
    await expectNoKeyIn([join(dir, 'merged.zip')]);
  });

  it('per-prototype keys give exactly their prototypes', async () => {
    await exportWith('full.zip', [service.keys.readOnly]);
    const keys = ['3', '17'].map((id) => service.keys.perPrototype[id] as string);
    const merged = await exportWith('two.zip', keys);
    expect(Object.keys(merged.manifest.prototypes)).toEqual(['3', '17']);
    expect(await prototypeEntries(join(dir, 'two.zip'))).toEqual(
      await prototypeEntries(join(dir, 'full.zip'), ['3', '17']),
    );
  });

  it('reads comma-separated keys from RABBIT_API_KEY and prints none of them', async () => {
    const env = {
      RABBIT_API_KEY: `${service.keys.perPrototype['3']}, ${service.keys.perPrototype['42']}`,
      RABBIT_BASE_URL: service.baseUrl,
    };
    const out = join(dir, 'env.zip');
    const run = await runCli(['export', '--out', out, '--json'], { register: registerExport, env });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, prototypes: 2 });
    await expectNoKeyIn([out], [run.stdout, run.stderr]);
  });
});

describe('--prototype and --formats', () => {
  it('--formats json --prototype exports a subset without renderings', async () => {
    const out = join(dir, 'subset.zip');
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    const run = await runCli(
      ['export', '--out', out, '--prototype', '3', '--prototype', '1002', '--formats', 'json', '--quiet'],
      { register: registerExport, env },
    );
    expect(run.code).toBe(0);
    const { manifest, entries } = await readArchive(out);
    expect(Object.keys(manifest.prototypes)).toEqual(['3', '1002']);
    const names = [...entries.keys()];
    // Renderings are the pages' .html and .png; the offline viewer's own files are not.
    expect(
      names.some((name) => name.startsWith('prototypes/') && (name.endsWith('.html') || name.endsWith('.png'))),
    ).toBe(false);
    expect(names.filter((name) => name.startsWith('prototypes/3/')).length).toBeGreaterThan(10);
    expect(service.stats.byPath.get('/rabbit/api/prototypes/1001.json')).toBeUndefined();
  });

  it('--formats json,png leaves out only the XHTML', async () => {
    const result = await exportAccount({
      out: join(dir, 'p.zip'),
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      formats: new Set(['json', 'png'] as const),
    });
    const names = [...(await readArchive(result.out)).entries.keys()];
    expect(names.some((name) => name.startsWith('prototypes/') && name.endsWith('.png'))).toBe(true);
    expect(names.some((name) => name.startsWith('prototypes/') && name.endsWith('.html'))).toBe(false);
  });

  it.each([
    [['--formats', 'html,png'], /must include json/],
    [['--formats', 'json,pdf'], /not pdf/],
    [['--prototype', 'page1'], /prototype id/],
    [['--prototype', '../3'], /prototype id/],
  ])('refuses %j as a usage error before any request', async (args, message) => {
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    const run = await runCli(['export', '--out', join(dir, 'x.zip'), ...args], { register: registerExport, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(service.stats.requests).toBe(0);
  });

  it('--since with a file that is not an archive is a usage error, and nothing is written', async () => {
    await writeFile(join(dir, 'prev.zip'), 'PK but not really');
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    const run = await runCli(['export', '--out', join(dir, 'x.zip'), '--since', join(dir, 'prev.zip')], {
      register: registerExport,
      env,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--since prev\.zip cannot be used/);
    expect(await readdir(dir)).toEqual(['prev.zip']);
  });
});
