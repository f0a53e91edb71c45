import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { checkBag } from '../../src/convert/bagit/check-bag.js';
import { numberedName, payloadNameOf } from '../../src/convert/bagit/payload-names.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { readArchive } from '../helpers/archive.js';
import { runTool } from './tools.js';
import { python } from '../helpers/tools.js';

/**
 * The bag judged by `sha256sum -c` (coreutils) for its manifests, Python's zipfile and tarfile
 * for its serializations, and RFC 8493's rules read for the rest: the declaration's two lines
 * (2.1.1), every payload file in the manifest and every manifest line a file (3), Payload-Oxum
 * as octets.streams of the payload (2.2.2), the tag manifest covering every tag file but itself
 * (2.2.1), a serialization holding one top-level folder named as the file (4.2).
 */
const JUDGE = fileURLToPath(new URL('./package_judge.py', import.meta.url));

let dir: string;
let archive: string;
let archived: Map<string, Buffer>;

/**
 * The sample's three fixed prototypes, their odd names and texts included, with small page images:
 * every kind of entry an archive holds, a bag's worth of files written, hashed, serialized and read
 * back four times over, without the ordinary prototypes' hundred more of the same kinds.
 */
const DATASET = { prototypes: 0, pngWidth: 80, pngHeight: 60 } as const;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-bagit-'));
  archive = join(dir, 'archive.zip');
  const service = await startFakeService({ dataset: DATASET });
  try {
    await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
  } finally {
    await service.close();
  }
  archived = new Map([...(await readArchive(archive)).entries].map(([name, entry]) => [name, entry.data]));
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SERIALIZATIONS = ['zip', 'tar'] as const;

/**
 * The archive as a bag in each serialization (written with --check into `dir/zip` and `dir/tar`),
 * each then unpacked by the one Python process (zipfile for the one, tarfile for the other) into
 * `dir/zip-unpacked` and `dir/tar-unpacked`: made once for the file, for the tests of both.
 */
let serialized:
  | Promise<{
      reports: Map<string, Awaited<ReturnType<typeof convertArchive>>>;
      unpacking: Awaited<ReturnType<typeof runTool>>;
    }>
  | undefined;
function serializedBags(): NonNullable<typeof serialized> {
  serialized ??= (async () => {
    const reports = new Map<string, Awaited<ReturnType<typeof convertArchive>>>();
    for (const as of SERIALIZATIONS)
      reports.set(as, await convertArchive({ archive, out: join(dir, as), to: 'bagit', serialize: as, check: true }));
    const pairs = SERIALIZATIONS.flatMap((as) => [join(dir, as, `archive.${as}`), join(dir, `${as}-unpacked`)]);
    return { reports, unpacking: await runTool(python(), [JUDGE, 'inflate', ...pairs]) };
  })();
  return serialized;
}

async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

/** What RFC 8493 and sha256sum say of a bag folder. */
async function judgeBag(bag: string): Promise<void> {
  expect(await readFile(join(bag, 'bagit.txt'), 'utf8')).toBe(
    'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
  );
  for (const manifest of ['manifest-sha256.txt', 'tagmanifest-sha256.txt']) {
    const run = await runTool('sh', ['-c', `cd "$1" && sha256sum --strict -c "$2"`, 'sh', bag, manifest]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }
  const listed = (await readFile(join(bag, 'manifest-sha256.txt'), 'utf8'))
    .trimEnd()
    .split('\n')
    .map((line) => line.slice(66));
  const payload = (await filesUnder(join(bag, 'data'))).map((name) => `data/${name}`);
  expect([...listed].sort()).toEqual(payload);
  const tags = (await readFile(join(bag, 'tagmanifest-sha256.txt'), 'utf8'))
    .trimEnd()
    .split('\n')
    .map((line) => line.slice(66));
  expect(tags.sort()).toEqual(['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt']);
  const info = await readFile(join(bag, 'bag-info.txt'), 'utf8');
  let octets = 0;
  for (const name of payload) octets += (await stat(join(bag, name))).size;
  expect(info).toMatch(new RegExp(`^Payload-Oxum: ${octets}\\.${payload.length}$`, 'm'));
  expect(info).toMatch(/^Bagging-Date: \d{4}-\d{2}-\d{2}$/m);
  expect(info).toMatch(/^External-Identifier: http:\/\/127\.0\.0\.1:\d+ account, exported to archive\.zip$/m);
  expect(info).toMatch(/^Bag-Software-Agent: rabbit-export /m);
  // Tag lines are `Label: value`, one per line (2.2.2).
  for (const line of info.trimEnd().split('\n')) expect(line).toMatch(/^[A-Za-z-]+: \S/);
}

describe('convert --to bagit', () => {
  it('writes a folder bag of every entry of the archive as it is, which sha256sum -c and RFC 8493 accept', async () => {
    const out = join(dir, 'folder');
    const report = await convertArchive({ archive, out, to: 'bagit', check: true });
    expect(report.package?.file).toBe('archive');
    const bag = join(out, 'archive');
    await judgeBag(bag);
    expect((await filesUnder(join(bag, 'data'))).sort()).toEqual([...archived.keys()].sort());
    for (const [name, data] of archived)
      expect((await readFile(join(bag, 'data', name))).equals(data), name).toBe(true);
    expect(report.package?.checked?.entries).toBe(archived.size);
    expect((await readdir(out)).sort()).toEqual(['archive', 'convert-report.json']);
  });

  for (const as of SERIALIZATIONS) {
    it(`--serialize ${as}: one file holding the bag in one folder named as the file, read back by Python's ${as === 'zip' ? 'zipfile' : 'tarfile'}`, async () => {
      const { reports, unpacking } = await serializedBags();
      expect(reports.get(as)?.package?.file).toBe(`archive.${as}`);
      expect((await readdir(join(dir, as))).sort()).toEqual([`archive.${as}`, 'convert-report.json']);
      expect(unpacking.code, unpacking.stderr).toBe(0);
      const unpacked = join(dir, `${as}-unpacked`);
      expect(await readdir(unpacked)).toEqual(['archive']);
      await judgeBag(join(unpacked, 'archive'));
    });
  }

  it('--check refuses a bag whose payload changed after it was written', async () => {
    const out = join(dir, 'tampered');
    await convertArchive({ archive, out, to: 'bagit' });
    await writeFile(join(out, 'archive', 'data', 'prototypes.json'), '[]');
    const error = await checkBag(join(out, 'archive')).catch((caught: unknown) => caught);
    expect(isRabbitError(error) && error.code).toBe('PACKAGE_INVALID');
  });

  it('refuses --serialize for a format that has none, and a serialization bagit does not write', async () => {
    for (const [to, serialize] of [
      ['wacz', 'zip'],
      ['drawio', 'zip'],
      ['bagit', 'rar'],
    ] as const) {
      const error = await convertArchive({ archive, out: join(dir, `refused-${to}`), to, serialize }).catch(
        (caught: unknown) => caught,
      );
      expect(isRabbitError(error) && error.code, `${to} ${serialize}`).toBe('USAGE');
    }
  });
});

describe('payload names', () => {
  it.each([
    ['prototypes/3/r6/pages/page1.json', 'prototypes/3/r6/pages/page1.json'],
    ['assets/ab12.view.css', 'assets/ab12.view.css'],
    ['a b/Ünïcode name?.JSON', 'a-b/ünïcode-name.json'],
    ['con/aux.txt', '_con/_aux.txt'],
    ['.hidden/x.', 'hidden/x'],
    ['dir/100%.png', 'dir/100.png'],
  ])('%s -> %s', (entry, name) => {
    expect(payloadNameOf(entry)).toBe(name);
  });

  it('numbers a taken name before its extension', () => {
    expect(numberedName('a/b.json', 2)).toBe('a/b-2.json');
    expect(numberedName('a.b/c', 3)).toBe('a.b/c-3');
  });
});
