import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { exportSample } from './helpers.js';

/** An archive exported with `--formats json` holds no PNG on purpose: nothing is missing from it. */
let dir: string | undefined;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-convert-json-only-'));
  archive = await exportSample(dir, new Set(['json']));
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('convert an archive exported without renderings', () => {
  it.each(['drawio', 'pdf', 'svg'] as const)(
    '--to %s converts every prototype fully and says once that there are no renderings',
    async (to) => {
      const out = await tempDir();
      const report = await convertArchive({ archive, out, to });
      expect(report.complete).toBe(true);
      expect(report.rendering).toBe(false);
      expect(report.prototypes).toHaveLength(5);
      for (const prototype of report.prototypes) {
        expect(prototype.skipped).toEqual([]);
        expect(prototype.file).not.toBeNull();
        expect(prototype.pages).toBeGreaterThan(0);
      }
      expect(report.notes).toEqual([expect.stringContaining('the archive holds no page renderings') as unknown]);
      expect(report.prototypes.flatMap((p) => p.notes).filter((n) => /renderings/.test(n.why))).toEqual([]);
    },
  );

  it('exits 0 and prints the note once', async () => {
    const out = join(await tempDir(), 'drawio');
    const run = await runCli(['convert', archive, '--to', 'drawio', '--out', out], { register: registerConvert });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('INCOMPLETE');
    expect(run.stdout.match(/note: the archive holds no page renderings/g)).toHaveLength(1);
    expect(run.stdout).toContain('5 of 5 prototypes written');
  });

  it('still reports renderings the export asked for and could not fetch', async () => {
    const work = await tempDir();
    const pages = ['page2200', 'page15'];
    const service = await startFakeService({
      seed: 1,
      faults: { paths: pages.map((page) => ({ path: `/rabbit/api/prototypes/42/pages/${page}.png`, kind: '404' })) },
    });
    const failed = join(work, 'failed.zip');
    try {
      const result = await exportAccount({
        out: failed,
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        prototypes: new Set(['42']),
      });
      expect(result.complete).toBe(false);
    } finally {
      await service.close();
    }
    const report = await convertArchive({ archive: failed, out: join(work, 'out') });
    expect(report.rendering).toBe(true);
    const [prototype] = report.prototypes;
    expect(report.notes).toEqual([]);
    expect(prototype?.skipped.map((s) => s.what)).toEqual([
      'prototype',
      ...pages.map((page) => `the rendering of page ${page}`),
    ]);
  });
});
