import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { requireTool } from '../helpers/tools.js';

const run = promisify(execFile);

// issue 45: what a user meets using the tool every day.

describe('two exports of the sample account', () => {
  it('diff finds nothing changed, whatever port each sample service listened on', async () => {
    const dir = await tempDir();
    const archives: string[] = [];
    for (const name of ['monday.zip', 'tuesday.zip']) {
      const service = await startFakeService({ seed: 1 });
      try {
        const out = join(dir, name);
        await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
        archives.push(out);
      } finally {
        await service.close();
      }
    }
    const run = await runCli(['diff', ...archives]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 added, 0 removed, 0 changed, 5 unchanged');
  });
});

describe('search', () => {
  it('finds a discussion by its author, through the index the export wrote', async () => {
    const service = await startFakeService({ seed: 1 });
    try {
      const out = join(await tempDir(), 'team.zip');
      await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
      const run = await runCli(['search', out, 'volker', '--json']);
      expect(run.code).toBe(0);
      const records = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records).toContainEqual(
        expect.objectContaining({ type: 'hit', kind: 'discussion', field: 'author', match: 'Volker', id: '1' }),
      );
      expect(records.at(-1)).toMatchObject({ type: 'summary', indexed: 5, scanned: 0 });
    } finally {
      await service.close();
    }
  });
});

describe('progress in a log and on a terminal', () => {
  it('with faults, concurrency changes are summed up beside the progress lines, not told one by one', async () => {
    const service = await startFakeService({ seed: 1, faults: { rate: 0.3, kinds: ['503', '429'], seed: 4 } });
    try {
      const dir = await tempDir();
      const done = await runCli(['export', '--out', join(dir, 'a.zip'), '--stats-interval', '1s'], {
        env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
      });
      // Complete, or with what the faults left unfetched recorded: either way the run ended.
      expect([0, 3]).toContain(done.code);
      expect(service.stats.faultsInjected).toBeGreaterThan(10);
      const lines = done.stderr.split('\n');
      expect(lines.filter((line) => line.startsWith('concurrency now'))).toEqual([]);
      const told = lines.filter((line) => line.startsWith('concurrency '));
      expect(told.length).toBeGreaterThan(0);
      expect(told.length).toBeLessThanOrEqual(lines.filter((line) => line.startsWith('progress: ')).length);
      expect(told.every((line) => / \(\d+ changes?|changed \d+ times/.test(line))).toBe(true);
    } finally {
      await service.close();
    }
  }, 60_000);

  // `script` gives the CLI a pseudo terminal that reports 0 columns: no bar can be drawn there,
  // and a person watching it gets a plain line at least every 5 s instead of nothing until the end.
  it('a terminal of unknown width gets a plain progress line at least every 5 s', async () => {
    requireTool('/usr/bin/script');
    const service = await startFakeService({ seed: 1, latencyMs: 60 });
    try {
      const dir = await tempDir();
      const command = `${process.execPath} ${BIN} export --out ${join(dir, 'a.zip')} --concurrency 1`;
      const { stdout } = await run('/usr/bin/script', ['-qfec', command, '/dev/null'], {
        env: {
          PATH: process.env['PATH'] ?? '',
          RABBIT_API_KEY: service.keys.readOnly,
          RABBIT_BASE_URL: service.baseUrl,
        },
        timeout: 60_000,
      });
      const progress = stdout.split(/\r?\n/).filter((line) => line.startsWith('progress: '));
      // Lines while it crawled, not only those at the end of the crawl and of the run.
      expect(progress.filter((line) => line.startsWith('progress: crawl')).length).toBeGreaterThanOrEqual(1);
      expect(stdout).toContain('complete: 5 prototypes');
    } finally {
      await service.close();
    }
  }, 90_000);

  it('verify --against-live on a terminal: how many are checked and the time left, every 5 s', async () => {
    requireTool('/usr/bin/script');
    const service = await startFakeService({ seed: 1, latencyMs: 60 });
    try {
      const out = join(await tempDir(), 'team.zip');
      await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
      const command = `${process.execPath} ${BIN} verify ${out} --against-live --concurrency 1`;
      const { stdout } = await run('/usr/bin/script', ['-qfec', command, '/dev/null'], {
        env: { PATH: process.env['PATH'] ?? '', RABBIT_API_KEY: service.keys.readOnly },
        timeout: 90_000,
      });
      const progress = stdout.split(/\r?\n/).filter((line) => line.startsWith('progress: checked '));
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toMatch(/^progress: checked \d+ of \d+ lists and resources \(\d+%\), \S+ left, \S+ elapsed$/);
      expect(stdout).toContain('MATCHES: everything checked is as the archive holds it');
    } finally {
      await service.close();
    }
  }, 120_000);
});
