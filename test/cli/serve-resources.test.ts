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
      dataset: { prototypes: 3, pagesPerPrototype: 100, pngWidth: 64 },
    });
    // Whole prototypes of 10,517 resources each: the nearest count is within half of one.
    expect(Math.abs(expected - 30_000)).toBeLessThan(5300);
    expect(stop).toMatchObject({ stats: { requests: 0 } });
  });

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
