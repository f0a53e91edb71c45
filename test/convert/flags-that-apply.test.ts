import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { runCli } from '../helpers/cli.js';
import { exportSample } from './helpers.js';

/**
 * A flag of convert that the format asked for has no use for is refused with a usage error, as
 * --serialize is: taken and ignored, --prototype 3 --to wacz would package every prototype while
 * the user believes one was.
 */
let dir: string;
let archive: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-convert-flags-'));
  archive = await exportSample(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('convert refuses a flag the format does not use', () => {
  const cases: Array<{ args: string[]; says: string }> = [
    { args: ['--to', 'svg', '--check'], says: '--check does not apply to --to svg' },
    { args: ['--to', 'drawio', '--check'], says: '--check does not apply to --to drawio' },
    { args: ['--to', 'wacz', '--prototype', '3'], says: '--prototype does not apply to --to wacz' },
    { args: ['--to', 'bagit', '--prototype', '3'], says: '--prototype does not apply to --to bagit' },
    { args: ['--to', 'wacz', '--no-rendering'], says: '--no-rendering does not apply to --to wacz' },
  ];
  for (const { args, says } of cases) {
    it(`${args.join(' ')}: exit 2, the reason, nothing written`, async () => {
      const out = join(dir, `out-${args.join('').replace(/\W/g, '')}`);
      const run = await runCli(['convert', archive, ...args, '--out', out, '-q'], { register: registerConvert });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(says);
      expect(await readdir(out).catch(() => [])).toEqual([]);
    });
  }

  it('the flags still work where they apply', async () => {
    const svg = await runCli(
      ['convert', archive, '--to', 'svg', '--prototype', '3', '--no-rendering', '--out', join(dir, 'svg'), '-q'],
      {
        register: registerConvert,
      },
    );
    expect(svg.code).toBe(0);
    const bag = await runCli(['convert', archive, '--to', 'bagit', '--check', '--out', join(dir, 'bag'), '-q'], {
      register: registerConvert,
    });
    expect(bag.code).toBe(0);
  });
});
