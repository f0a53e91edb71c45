import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { keyEncodings, startHostileFront, type HostileFront } from '../export/hostile-front.js';
import { useFakeService } from '../helpers/fake-service.js';
import { runTool } from './tools.js';
import { python } from '../helpers/tools.js';

/**
 * The packages of an archive exported from a service that writes the run's keys into what it
 * answers (pages, JSON, stylesheets, PNGs, links): no key in any byte of the WACZ or the bag, nor
 * in anything a reader inflates out of them (zip members, and each WARC record's gzip member),
 * in any encoding the front writes it in.
 */
const JUDGE = fileURLToPath(new URL('./package_judge.py', import.meta.url));

let service: FakeService;
let dir: string;
let front: HostileFront | undefined;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
afterEach(async () => {
  await front?.close();
  front = undefined;
});

function runKeys(): string[] {
  return [service.keys.readOnly, service.keys.perPrototype['1001'] as string];
}

/** `file: key n encoding` for each place a key is found in the files under `root`. */
async function keysIn(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path);
    for (const [i, key] of runKeys().entries()) {
      for (const [encoding, text] of Object.entries(keyEncodings(key))) {
        if (bytes.includes(Buffer.from(text, 'latin1')))
          found.push(`${relative(root, path)}: key ${i + 1} ${encoding}`);
      }
    }
  }
  return found;
}

/** Each `[file, into]` inflated by package_judge.py, all in one Python process. */
async function inflate(...pairs: Array<[file: string, into: string]>): Promise<void> {
  const run = await runTool(python(), [JUDGE, 'inflate', ...pairs.flat()]);
  if (run.code !== 0) throw new Error(run.stderr);
}

describe('the API key is nowhere in a package convert writes', () => {
  it('neither in the WACZ nor in the bag (folder, zip, tar), raw or inflated', async () => {
    front = await startHostileFront(service.baseUrl, runKeys());
    const exported = await exportAccount({
      out: join(dir, 'spiked.zip'),
      baseUrl: front.baseUrl,
      keys: runKeys(),
      concurrency: 4,
    });
    const out = join(dir, 'out');
    await mkdir(out);
    const wacz = await convertArchive({ archive: exported.out, out: join(out, 'wacz'), to: 'wacz', check: true });
    await convertArchive({ archive: exported.out, out: join(out, 'bag'), to: 'bagit' });
    await convertArchive({ archive: exported.out, out: join(out, 'zip'), to: 'bagit', serialize: 'zip' });
    await convertArchive({ archive: exported.out, out: join(out, 'tar'), to: 'bagit', serialize: 'tar' });
    await inflate(
      [join(out, 'wacz', wacz.package!.file), join(dir, 'inflated', 'wacz')],
      [join(out, 'zip', 'spiked.zip'), join(dir, 'inflated', 'zip')],
      [join(out, 'tar', 'spiked.tar'), join(dir, 'inflated', 'tar')],
    );
    // The WARC's records were inflated one by one, and the spiked bodies are among them.
    const inflated = await readdir(join(dir, 'inflated', 'wacz', 'archive'));
    expect(inflated.filter((name) => name.startsWith('data.warc.gz.member-')).length).toBe(wacz.package!.entries + 1);
    expect(await keysIn(out)).toEqual([]);
    expect(await keysIn(join(dir, 'inflated'))).toEqual([]);
    // It would find one: the front did write keys, and the archive replaced them.
    const marker = await runTool('grep', ['-rl', 'REDACTED-API-KEY', join(dir, 'inflated', 'wacz', 'archive')]);
    expect(marker.stdout.trim().split('\n').length).toBeGreaterThan(3);
  }, 240_000);
});
