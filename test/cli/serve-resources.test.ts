import { describe, expect, it } from 'vitest';
import { countExportRequests, datasetForResources, FakeStore } from '../../src/fake-service/index.js';
import { startCli } from '../helpers/cli.js';

/** `serve --resources N`: the benchmark's way to get a big account and its exact size. */
describe('serve --resources', () => {
  it('serves an account of about N resources and says exactly how many', async () => {
    const { child, done } = startCli(['serve', '--json', '--resources', '30000']);
    let first = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      first += chunk.toString();
      if (first.includes('\n')) child.kill('SIGTERM');
    });
    const run = await done;
    // The CLI ends on the signal it was stopped with, after the service has closed and said so.
    expect(run.code === 0 || run.signal === 'SIGTERM').toBe(true);
    const [info, stop] = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const expected = countExportRequests(new FakeStore(1, datasetForResources(30_000), () => 0));
    expect(info).toMatchObject({
      resources: expected,
      seed: 1,
      dataset: { prototypes: 3, elementsPerPage: 100, pngWidth: 64 },
    });
    expect(Math.abs(expected - 30_000)).toBeLessThanOrEqual(3000);
    expect(stop).toMatchObject({ stats: { requests: 0 } });
  });

  // A prototype of the big shape is some 10,500 resources: a smaller N once made one whole one.
  it.each([3000, 500])('--resources %i makes that many, within a tenth', async (target) => {
    const { child, done } = startCli(['serve', '--json', '--resources', String(target)]);
    let first = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      first += chunk.toString();
      if (first.includes('\n')) child.kill('SIGTERM');
    });
    const run = await done;
    const info = JSON.parse(run.stdout.trim().split('\n')[0] ?? '') as { resources: number };
    expect(Math.abs(info.resources - target)).toBeLessThanOrEqual(target * 0.1);
  });

  it.each([200, 1000, 3000, 10_000, 20_000, 55_555, 100_000, 1_000_000])(
    'an account planned for %i resources has that many, within a tenth, counted as an export walks it',
    (target) => {
      const store = new FakeStore(1, datasetForResources(target), () => 0);
      expect(Math.abs(countExportRequests(store) - target)).toBeLessThanOrEqual(target * 0.1);
    },
  );

  it('with --prototypes, serves that many prototypes of as many pages as it takes (and --big-ids)', async () => {
    const { child, done } = startCli(['serve', '--json', '--resources', '250000', '--prototypes', '1', '--big-ids']);
    let first = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      first += chunk.toString();
      if (first.includes('\n')) child.kill('SIGTERM');
    });
    const run = await done;
    expect(run.code === 0 || run.signal === 'SIGTERM').toBe(true);
    const info = JSON.parse(run.stdout.trim().split('\n')[0] ?? '') as Record<string, unknown>;
    const dataset = { ...datasetForResources(250_000, { prototypes: 1 }), bigIds: true };
    expect(info).toMatchObject({
      resources: countExportRequests(new FakeStore(1, dataset, () => 0)),
      dataset: { prototypes: 1, pagesPerPrototype: 2380, elementsPerPage: 100, bigIds: true },
    });
  });

  it('refuses --resources together with --prototypes and --pages', async () => {
    const run = await startCli(['serve', '--resources', '1000', '--prototypes', '3', '--pages', '4']).done;
    expect(run.code).toBe(2);
  });
});
