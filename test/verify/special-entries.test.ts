import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { writeSampleArchive } from './sample-archive.js';

/**
 * A zip entry made on UNIX carries its st_mode: unzip, bsdtar and Python's zipfile recreate a
 * symlink entry as a link to its content. An archive holding one is not "verified", whatever its
 * checksums say, and our own writer marks every entry a regular file.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-special-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PAGE = 'prototypes/4711/r17/pages/page0001.json';

/** Rewrites `path` with Python's zipfile, giving `entry` the UNIX mode `mode` (made by host 3). */
function withMode(path: string, entry: string, mode: number): string {
  requireTool('python3');
  const out = join(dir, 'special.zip');
  const script = `
import sys, zipfile
src, out, entry, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as w:
    for info in z.infolist():
        data = z.read(info)
        copy = zipfile.ZipInfo(info.filename, info.date_time)
        copy.compress_type = zipfile.ZIP_DEFLATED
        copy.create_system = 3
        copy.external_attr = ((mode if info.filename == entry else 0o100644) << 16)
        w.writestr(copy, data)
`;
  execFileSync(python(), ['-c', script, path, out, entry, String(mode)]);
  return out;
}

describe('entries that are not regular files', () => {
  it.each([
    ['a symlink', 0o120777],
    ['a character device', 0o020644],
    ['a fifo', 0o010644],
  ])('refuses %s and names it, though its checksums match', async (_label, mode) => {
    const zip = withMode(await writeSampleArchive(dir), PAGE, mode);
    const report = await verifyArchive(zip);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'not-a-file', path: PAGE })]);
    const run = await runCli(['verify', zip], { register: registerVerify });
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain(PAGE);
  });

  it('accepts the same archive when every entry is a regular file or has no type bits', async () => {
    const sample = await writeSampleArchive(dir);
    expect((await verifyArchive(withMode(sample, PAGE, 0o100600))).ok).toBe(true);
    expect((await verifyArchive(withMode(sample, PAGE, 0o644))).ok).toBe(true);
  });

  it('writes every entry of its own archives as a regular file, as Python zipfile reads them', async () => {
    requireTool('python3');
    const zip = await writeSampleArchive(dir);
    const modes = execFileSync(python(), [
      '-c',
      'import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.create_system, oct(i.external_attr >> 16))',
      zip,
    ])
      .toString()
      .trim()
      .split('\n');
    expect(modes.length).toBeGreaterThan(5);
    expect(new Set(modes)).toEqual(new Set(['3 0o100644']));
  });
});
