import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchiveManifest } from '../../src/archive/open-archive.js';
import { registerDiff } from '../../src/cli/commands/diff.js';
import { registerLinks } from '../../src/cli/commands/links.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli, type CliOptions } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { exportPrototype } from '../restore/restore-helpers.js';

/**
 * A real export re-written by Python's zipfile with one file entry's `source` changed (argv[3],
 * JSON: the entry's path, its new source, and optionally the name it is moved to, in the zip and
 * in the manifest, still listed where it was). The body and its sha256 are left alone, so only the
 * pairing of source, path and listing is wrong.
 */
const SWAP = `
import json, sys, zipfile
src, out, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
zin = zipfile.ZipFile(src)
files = {i.filename: zin.read(i.filename) for i in zin.infolist()}
m = json.loads(files['manifest.json'])
found = 0
for p in m['prototypes'].values():
    for rev in p['revisions'].values():
        for r in rev['files']:
            if r['path'] == spec['path']:
                r['source'] = spec['source']
                found += 1
                if 'moveTo' in spec:
                    files[spec['moveTo']] = files.pop(r['path'])
                    r['path'] = spec['moveTo']
for r in m['files']:
    if r['path'] == spec['path']:
        r['source'] = spec['source']
        found += 1
if found != 1:
    sys.exit('no single entry ' + spec['path'])
files['manifest.json'] = json.dumps(m).encode('utf-8')
with zipfile.ZipFile(out, 'w') as z:
    for name, data in files.items():
        z.writestr(name, data)
`;

const PROTO = '1001';
const REV = `prototypes/${PROTO}/r1/`;
const API = `/rabbit/api/prototypes/${PROTO}/`;

let service: FakeService;
let dir: string;
let good: string;

const cli =
  (command: string, register: NonNullable<CliOptions['register']>) =>
  (...args: string[]) =>
    runCli([command, ...args], { register, env: {} });
const ls = cli('ls', registerLs);
const diff = cli('diff', registerDiff);
const links = cli('links', registerLinks);
const verify = cli('verify', registerVerify);

function swap(name: string, path: string, source: string, moveTo?: string): string {
  const out = join(dir, name);
  const spec = JSON.stringify({ path, source, ...(moveTo === undefined ? {} : { moveTo }) });
  execFileSync(python(), ['-c', SWAP, good, out, spec], { stdio: 'pipe' });
  return out;
}

beforeAll(async () => {
  requireTool('python3');
  service = await startFakeService({ seed: 1 });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-source-path-'));
  good = await exportPrototype(service, dir, 'good.zip', ['json', 'html', 'png', 'xhtml-sketched', 'xhtml-plain']);
});
afterAll(async () => {
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Entries of the export, each given the source of something else, or moved where its listing does not say. */
const SWAPS: Array<[string, string, string, string?]> = [
  ['another kind', `${REV}pages/page0001.json`, `${API}layers/layer1.json`],
  ['another prototype', `${REV}pages/page0001.json`, '/rabbit/api/prototypes/42/pages/page0001.json'],
  ['another page', `${REV}pages/page0001.json`, `${API}pages/page0002.json`],
  ['a rendering', `${REV}pages/page0001.json`, `${API}pages/page0001.png`],
  ['an older view of another mode', `${REV}pages/page0001.sketched.xhtml`, `${API}pages/page0001.xhtml?mode=plain`],
  ['an element of another parent', `${REV}layers/layer1.json`, `${API}pages/page0001/elements/element1.json`],
  ['a revision entry at the root', 'prototypes.json', `${API}pages/page0001.json`],
  [
    'another revision',
    `${REV}pages/page0001.json`,
    `${API}pages/page0001.json`,
    `prototypes/${PROTO}/r2/pages/page0001.json`,
  ],
  [
    'another prototype, moved with it',
    `${REV}pages/page0001.json`,
    '/rabbit/api/prototypes/42/pages/page0001.json',
    'prototypes/42/r1/pages/page0001.json',
  ],
];

describe('a file entry whose source the table puts elsewhere', () => {
  it('the export itself reads back, in every reader', async () => {
    expect((await verify(good)).code).toBe(0);
    expect((await ls(good)).code).toBe(0);
    expect((await diff(good, good)).code).toBe(0);
    const mapped = await links(good);
    expect(mapped.code).toBe(0);
    expect(mapped.stdout).toContain(`${REV}layers/layer1.json`);
  });

  it.each(SWAPS)(
    'with the source of %s: verify names it, links, diff and ls refuse it',
    async (what, from, source, moveTo) => {
      const archive = swap(`${what.replace(/\W+/g, '-')}.zip`, from, source, moveTo);
      const path = moveTo ?? from;
      const checked = await verify(archive, '--json');
      expect(checked.code).toBe(1);
      expect(checked.stdout).toContain(JSON.stringify(path).slice(1, -1));

      // Nothing is written: a redirect from a layer's URL to a page's file is worse than none.
      const mapped = await links(archive);
      expect(mapped).toMatchObject({ code: 1, stdout: '' });
      expect(mapped.stderr).toContain(path);

      for (const run of [await diff(good, archive), await ls(archive)]) {
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(path);
      }
      // What every reader is stopped by: the one check of the manifest's values.
      await expect(readArchiveManifest(archive)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT' });
    },
  );
});
