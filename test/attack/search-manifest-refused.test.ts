import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { partsFile } from '../../src/search/search-record.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { BARE_MANIFEST, MANIFEST_HEAD, SHOP_PART } from '../search/crafted-index.js';

/**
 * Archives whose search index is whole and in place, written by Python's zipfile in the order the
 * export writes (a prototype's files, search/, index.html, manifest.json), but whose manifest is
 * missing or is not a manifest. `ls` refuses them; search must too, with the same error, though it
 * reads its hits from the index without reading the manifest through.
 */
const WRITE_ZIP = `
import json, sys, zipfile
out, spec = sys.argv[1], json.load(open(sys.argv[2]))
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for name, text in spec:
        z.writestr(name, text)
`;

type Entries = Array<[string, string]>;

const BODIES: Entries = Array.from({ length: 40 }, (_, i) => [`prototypes/5/r1/pages/p${i}.json`, `{"name":"p${i}"}`]);
const INDEX: Entries = [
  ['search/search-box.js', '// box'],
  ['search/prototype-5.js', SHOP_PART],
  ['search/index.js', partsFile(['5'])],
];
const VIEWER: Entries = [['index.html', '<!doctype html>']];

/** The export's order, with `manifest` as manifest.json's text (none when undefined). */
const exported = (manifest: string | undefined): Entries => [
  ...BODIES,
  ...INDEX,
  ...VIEWER,
  ...(manifest === undefined ? [] : ([['manifest.json', manifest]] as Entries)),
];

let dir: string;
let made = 0;

async function makeZip(entries: Entries): Promise<string> {
  const name = `archive-${++made}`;
  const out = join(dir, `${name}.zip`);
  await writeFile(join(dir, `${name}.json`), JSON.stringify(entries));
  execFileSync(python(), ['-c', WRITE_ZIP, out, join(dir, `${name}.json`)]);
  return out;
}

/** The failure a command's --json summary reports (undefined when it succeeded), and its exit code. */
async function failure(command: 'ls' | 'search', archive: string): Promise<{ code: number | null; error: unknown }> {
  const args = command === 'ls' ? ['ls', archive, '--json'] : ['search', archive, 'coupon', '--json', '--quiet'];
  const run = await runCli(args, { register: command === 'ls' ? registerLs : registerSearch });
  const summary = JSON.parse(run.stdout.trimEnd().split('\n').at(-1) ?? '{}') as { error?: unknown };
  return { code: run.code, error: summary.error };
}

async function hits(archive: string): Promise<unknown[]> {
  const run = await runCli(['search', archive, 'coupon', '--json', '--quiet'], { register: registerSearch });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; id?: string })
    .map((record) => (record.type === 'hit' ? record.id : record.type));
}

beforeAll(async () => {
  requireTool('python3');
  dir = await mkdtemp(join(tmpdir(), 'rabbit-search-manifest-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('search refuses an archive ls refuses, with the same error', () => {
  const cases: Array<[string, () => Entries, RegExp]> = [
    ['no manifest.json', () => exported(undefined), /has no manifest\.json/],
    ['a manifest.json that is not JSON', () => exported('this is not JSON'), /manifest\.json in .* is not valid JSON/],
    ['a manifest.json that is not an object', () => exported('[1, 2, 3]'), /is not a JSON object/],
    ['a manifest.json of no format', () => exported('{"hello": "world"}'), /formatVersion is missing/],
    [
      'a manifest.json of a newer format',
      () => exported(JSON.stringify({ ...MANIFEST_HEAD, formatVersion: 2, prototypes: {}, files: [], errors: [] })),
      /formatVersion is 2, newer than this tool reads/,
    ],
    [
      'a manifest.json whose head is not a manifest',
      () => exported(JSON.stringify({ ...MANIFEST_HEAD, tool: 'rabbit', prototypes: {}, files: [], errors: [] })),
      /tool must be \{ name, version \}/,
    ],
    ['the index parts alone', () => INDEX, /has no manifest\.json/],
    // Twenty entries after the index: too far from the end for the tail, so the zip is opened whole.
    [
      'no manifest.json, the index far from the directory end',
      () => [...INDEX, ...BODIES.slice(0, 20)],
      /has no manifest\.json/,
    ],
  ];
  for (const [what, entries, message] of cases) {
    it(`with ${what}`, async () => {
      const archive = await makeZip(entries());
      const ls = await failure('ls', archive);
      expect(ls).toMatchObject({ code: 1, error: { code: 'ARCHIVE_CORRUPT', message } });
      expect(await failure('search', archive)).toEqual(ls);
    });
  }
});

describe('search answers from the index of an archive whose manifest is one', () => {
  it('as the export writes it', async () => {
    expect(await hits(await makeZip(exported(BARE_MANIFEST)))).toEqual(['e1', 'summary']);
  });

  it('written before the index, out of the directory tail', async () => {
    const archive = await makeZip([...BODIES, ['manifest.json', BARE_MANIFEST], ...INDEX, ...VIEWER]);
    expect(await hits(archive)).toEqual(['e1', 'summary']);
  });

  it('whose head comes after a long list of prototypes', async () => {
    const record = {
      name: 'Shop',
      lastModification: null,
      revision: 1,
      complete: true,
      revisions: { '1': { milestone: null, files: [] } },
    };
    const prototypes = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [String(i + 1), record]));
    const manifest = JSON.stringify({ prototypes, files: [], errors: [], ...MANIFEST_HEAD });
    expect(await hits(await makeZip(exported(manifest)))).toEqual(['e1', 'summary']);
  });
});
