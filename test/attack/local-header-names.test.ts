import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { serveArchive } from '../../src/viewer/serve-archive.js';
import { runCli, type CliOptions } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';

/**
 * A zip names each entry twice: in the central directory and in the entry's local header. Readers
 * that walk the local headers (bsdtar, Java's ZipInputStream, any streaming unzip) see the second;
 * ours and unzip see the first. A crafted zip whose two names differ is therefore two archives: a
 * verify that passed it would vouch for files that extract under other names elsewhere. Every
 * reader must refuse such an entry, never read it under either name.
 *
 * The zips are written by hand in Python (not by our writer): each entry's data and the directory
 * as the export wrote them, and the local header of each entry named in argv[3] ({directory name:
 * local name}) carrying the other name.
 */
const CRAFT = `
import json, struct, sys, zipfile
src, out, renames = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
raw = open(src, 'rb').read()
infos = zipfile.ZipFile(src).infolist()
body, central = bytearray(), bytearray()
for info in infos:
    at = info.header_offset
    nlen, elen = struct.unpack('<HH', raw[at + 26:at + 30])
    data = raw[at + 30 + nlen + elen:at + 30 + nlen + elen + info.compress_size]
    local = renames.get(info.filename, info.filename).encode('utf-8')
    name = info.filename.encode('utf-8')
    offset = len(body)
    body += struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0x800, info.compress_type, 0, 0x21, info.CRC,
                        info.compress_size, info.file_size, len(local), 0) + local + data
    central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 0x314, 20, 0x800, info.compress_type, 0, 0x21,
                           info.CRC, info.compress_size, info.file_size, len(name), 0, 0, 0, 0, 0o100644 << 16,
                           offset) + name
start = len(body)
body += central + struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, len(infos), len(infos), len(central), start, 0)
open(out, 'wb').write(body)
`;

const REV = 'prototypes/1001/r1/';
const PAGES = `${REV}pages.json`;
const LAYERS = `${REV}layers.json`;
const PART = 'search/prototype-1001.js';
/** Each swapped with the other in the local headers; index.html's local header names a path outside. */
const SWAPPED = {
  [PAGES]: LAYERS,
  [LAYERS]: PAGES,
  'index.html': '../../evil.html',
  [PART]: 'search/prototype-1002.js',
};

let dir: string;
let good: string;
let swapped: string;
let manifest: string;

const cli =
  (command: string, register: NonNullable<CliOptions['register']>) =>
  (...args: string[]) =>
    runCli([command, ...args], { register });
const verify = cli('verify', registerVerify);
const ls = cli('ls', registerLs);
const search = cli('search', registerSearch);
const convert = cli('convert', registerConvert);

function craft(name: string, renames: Record<string, string>): string {
  const out = join(dir, name);
  execFileSync(python(), ['-c', CRAFT, good, out, JSON.stringify(renames)], { stdio: 'pipe' });
  return out;
}

beforeAll(async () => {
  requireTool('python3');
  requireTool('bsdtar');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-local-names-'));
  good = join(dir, 'good.zip');
  const service = await startFakeService({ seed: 1 });
  try {
    await exportAccount({
      out: good,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      formats: new Set(['json']),
    });
  } finally {
    await service.close();
  }
  swapped = craft('swapped.zip', SWAPPED);
  manifest = craft('manifest.zip', { 'manifest.json': 'manifest.jsoN' });
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a zip whose local headers name other entries than its directory', () => {
  it('is read differently by readers we did not write: Python refuses it, bsdtar takes the local names', () => {
    const tested = execFileSync(python(), [
      '-c',
      'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).testzip())',
      swapped,
    ]);
    expect(tested.toString().trim()).not.toBe('None');
    const listed = execFileSync('bsdtar', ['-tf', swapped]).toString().split('\n');
    expect(listed).toContain('../../evil.html');
    expect(listed).not.toContain('index.html');
    // The hand-written zip is otherwise sound: the export it came from reads back under either reader.
    expect(
      execFileSync(python(), ['-c', 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).testzip())', good])
        .toString()
        .trim(),
    ).toBe('None');
  });

  it('verify names each such entry and fails', async () => {
    const run = await verify(swapped, '--json');
    expect(run.code).toBe(1);
    const problems = (JSON.parse(run.stdout) as { problems: Array<{ path: string; detail: string }> }).problems;
    expect(problems.map((problem) => problem.path).sort()).toEqual(Object.keys(SWAPPED).sort());
    for (const problem of problems) expect(problem.detail).toMatch(/local header/);
    expect((await verify(good)).code).toBe(0);
  });

  it('view refuses each such entry, with none of its bytes or the other name’s, and serves the rest', async () => {
    const server = await serveArchive(swapped);
    try {
      const get = async (path: string) => {
        const response = await request(`${server.url}${path}`);
        return { status: response.statusCode, body: await response.body.text() };
      };
      const pages = await get(PAGES);
      expect(pages.status).toBe(500);
      expect(pages.body).not.toContain('page0001');
      expect((await get(LAYERS)).status).toBe(500);
      // index.html is never read from the archive under view: the server renders its own from the entries that pass.
      const index = await get('');
      expect(index.status).toBe(200);
      expect(index.body).toContain('<script src="search/search-box.js"');
      expect((await get(PART)).status).toBe(500);
      expect((await get('manifest.json')).status).toBe(200);
      expect((await get(`${REV}prototype.json`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('search refuses an index part that is one, naming it', async () => {
    const run = await search(swapped, 'a', '--prototype', '1001');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(PART);
  });

  it('convert leaves out what it cannot read and says so', async () => {
    const run = await convert(swapped, '--to', 'excalidraw', '--out', join(dir, 'converted'), '--json');
    const report = JSON.parse(run.stdout) as {
      prototypes: Array<{ id: string; complete: boolean; skipped: Array<{ why: string }> }>;
    };
    const prototype = report.prototypes.find((entry) => entry.id === '1001');
    expect(prototype?.complete).toBe(false);
    expect(prototype?.skipped.map((skip) => skip.why).join('\n')).toContain(PAGES);
  });

  it('when it is the manifest: ls, verify, view and convert refuse the archive', async () => {
    const listed = await ls(manifest);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toMatch(/manifest\.json.*local header/);
    expect((await verify(manifest)).code).toBe(1);
    await expect(serveArchive(manifest)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT' });
    expect((await convert(manifest, '--to', 'excalidraw', '--out', join(dir, 'converted-m'))).code).toBe(1);
  });
});
