import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSearch } from '../../src/cli/commands/search.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';

/** A small zip by Python's zipfile: `names` as entries, each holding its own name. */
const WRITE_ZIP = `
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for name in sys.argv[2:]:
        z.writestr(name, name * 50)
`;

let dir: string;

const search = (...args: string[]) => runCli(['search', ...args], { register: registerSearch });
const sha = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

async function zipOf(name: string, ...entries: string[]): Promise<string> {
  const out = join(dir, name);
  execFileSync(python(), ['-c', WRITE_ZIP, out, ...entries]);
  return out;
}

beforeAll(async () => {
  requireTool('python3');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-careless-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('search given the wrong thing', () => {
  it('says a folder is a folder', async () => {
    await mkdir(join(dir, 'backup.zip'));
    const result = await search(join(dir, 'backup.zip'), 'coupon');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/backup\.zip is a folder, not a zip archive/);
  });

  it('says a FIFO is not a regular file, at once, rather than calling it a folder or waiting on it', async () => {
    const fifo = join(dir, 'pipe.zip');
    execFileSync('mkfifo', [fifo]);
    const result = await search(fifo, 'coupon');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/pipe\.zip is not a regular file/);
    expect(result.stderr).not.toMatch(/folder/);
  });

  it('says a text file is not a zip, and leaves it as it was', async () => {
    const text = join(dir, 'notes.zip');
    await writeFile(text, 'not a zip\n');
    const before = await sha(text);
    const result = await search(text, 'coupon');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/notes\.zip is not a zip archive/);
    expect(await sha(text)).toBe(before);
  });

  it('says a cut-short archive, or one still being written, was cut short', async () => {
    const whole = await readFile(await zipOf('whole.zip', 'manifest.json', 'search/index.js', 'index.html'));
    const cut = join(dir, 'cut.zip');
    await writeFile(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    // The zip writer's temp name beside the output while an export runs: local entries, no directory yet.
    const writing = join(dir, '.team.zip.4242.ab12cd.tmp');
    await writeFile(writing, whole.subarray(0, whole.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))));
    for (const file of [cut, writing]) {
      const before = await sha(file);
      const result = await search(file, 'coupon');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/cut short/);
      expect(await sha(file)).toBe(before);
    }
  });

  it('refuses a misspelt --kind as a usage error that lists the kinds', async () => {
    const result = await search(await zipOf('kinds.zip', 'manifest.json'), 'coupon', '--kind', 'elements');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/prototype, page, layer, element, discussion, milestone/);
  });

  it('prints no control character of an entry name it refuses', async () => {
    const zip = await zipOf('escapes.zip', 'manifest.json', '../\u001b]0;owned\u0007\u009b2J/x');
    const result = await search(zip, 'coupon');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unsafe name/);
    // eslint-disable-next-line no-control-regex
    expect(result.stderr + result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
