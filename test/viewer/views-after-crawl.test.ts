import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { readArchive } from '../helpers/archive.js';
import { runCli, startCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

/**
 * Node's own trace of the worker threads a process starts (NODE_DEBUG=worker): what the built CLI
 * does, seen from outside, with no hook in it for the test.
 */
const WORKER_TRACE = { NODE_DEBUG: 'worker' };
const WORKER_CREATED = /created Worker with ID/;

const VIEW = /^prototypes\/\d+\/r\d+\/pages\/page\d+\.view\.html$/;

describe('page views after the crawl', () => {
  let service: FakeService;
  let dir: string;
  useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

  it('node traces a worker thread as this test reads it', () => {
    // The trace is Node's, not ours: were its words to change, the test below would pass for nothing.
    const traced = spawnSync(
      process.execPath,
      ['-e', "new (require('node:worker_threads').Worker)('0', { eval: true })"],
      {
        env: { ...WORKER_TRACE, PATH: process.env['PATH'] ?? '' },
        encoding: 'utf8',
      },
    );
    expect(traced.stderr).toMatch(WORKER_CREATED);
  });

  it('export --since builds the views of the pages it copies in its own thread, the same views as before', async () => {
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    const first = join(dir, 'first.zip');
    const second = join(dir, 'second.zip');
    // The first export only makes the archive the second starts from: run in this worker, through
    // the CLI's program. The second is the one traced from outside, so it is a process of its own.
    expect((await runCli(['export', '--out', first], { env, register: 'all' })).code).toBe(0);
    // Nothing changed: every page is copied from the first archive, none is fetched, so every
    // prototype's views are made once the crawl is over, when no request is left for them to delay.
    const since = await startCli(['export', '--out', second, '--since', first], { env: { ...env, ...WORKER_TRACE } })
      .done;
    expect(since.code, since.stderr).toBe(0);
    expect(since.stderr).not.toMatch(WORKER_CREATED);

    const before = (await readArchive(first)).entries;
    const after = (await readArchive(second)).entries;
    const views = [...before.keys()].filter((name) => VIEW.test(name));
    expect(views.length).toBeGreaterThan(0);
    for (const name of views)
      expect(after.get(name)?.data.equals(before.get(name)?.data ?? Buffer.alloc(0)), name).toBe(true);
  });
});
