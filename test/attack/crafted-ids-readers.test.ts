import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerDiff } from '../../src/cli/commands/diff.js';
import { recordsOfType } from '../helpers/json-records.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerLinks } from '../../src/cli/commands/links.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runAction, type CliIO } from '../../src/cli/run.js';
import { RabbitError } from '../../src/core/errors.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { serveArchive } from '../../src/viewer/serve-archive.js';
import { readArchive } from '../helpers/archive.js';
import { runCli, type CliOptions } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { exportPrototype } from '../restore/restore-helpers.js';

/**
 * Archives built by Python's zipfile from a real export, with ids, names and entries our writer
 * would never write, read by every reader. The spec (JSON, on a line to the crafting Python) says
 * what to change in prototype PROTO's revision: `entries` replaced or added (text), `records` added
 * to or changed in its manifest listing, `sources` of listed paths changed, `prototype` fields
 * merged into its manifest record, `duplicates` appended as second entries of the same name, and
 * `remove`d entries taken out with their manifest record. Every listed entry's size and sha256 are
 * brought in line, so only what the spec says is wrong.
 */
const CRAFT = `
import hashlib, json, sys, traceback, zipfile
def craft(src, out, spec):
    zin = zipfile.ZipFile(src)
    files = {i.filename: zin.read(i.filename) for i in zin.infolist()}
    m = json.loads(files['manifest.json'])
    proto = m['prototypes'][spec['proto']]
    listing = proto['revisions'][str(proto['revision'])]['files']
    for name, text in spec.get('entries', {}).items():
        files[name] = text.encode('utf-8')
    for name in spec.get('remove', []):
        del files[name]
        m['files'] = [r for r in m['files'] if r['path'] != name]
    for path, source in spec.get('records', []):
        for r in listing:
            if r['path'] == path:
                r['source'] = source
                break
        else:
            listing.append({'path': path, 'source': source, 'sha256': '0' * 64, 'size': 0,
                            'contentType': 'application/json; charset=utf-8', 'lastModified': None})
    for r in listing:
        if r['path'] in spec.get('sources', {}):
            r['source'] = spec['sources'][r['path']]
    proto.update(spec.get('prototype', {}))
    for rev in proto['revisions'].values():
        if 'milestone' in spec and rev.get('milestone'):
            rev['milestone']['name'] = spec['milestone']
    for lst in [m['files']] + [rv['files'] for p in m['prototypes'].values() for rv in p['revisions'].values()]:
        for r in lst:
            if r['path'] in files and r['source'] != 'generated':
                r['sha256'] = hashlib.sha256(files[r['path']]).hexdigest()
                r['size'] = len(files[r['path']])
    files['manifest.json'] = json.dumps(m).encode('utf-8')
    with zipfile.ZipFile(out, 'w') as z:
        for name, data in files.items():
            z.writestr(name, data)
        for name, text in spec.get('duplicates', []):
            z.writestr(name, text.encode('utf-8'))
# One [src, out, spec] a line on stdin, answered by one line: ok, or the error on a line of its own.
for line in sys.stdin:
    try:
        craft(*json.loads(line))
        print('ok', flush=True)
    except Exception:
        print(json.dumps(traceback.format_exc()), flush=True)
`;

const PROTO = '1001';
const REV = `prototypes/${PROTO}/r1/`;
const API = `/rabbit/api/prototypes/${PROTO}/`;
/** What a terminal acts on or reorders by: C0 (but CR and LF, which end CSV rows), DEL, C1, separators, bidi marks, overrides, isolates. */
const ACTIVE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** Ids a reader must never put into a path or a URL: each one unsafe there. */
const UNSAFE_IDS = ['..', '.', '%2e%2e', 'a/b', 'a\\b', 'x'.repeat(300), 'p\u0000q', '\u001b[31mred', '../../../x'];
/** Ids safe in a path but of no kind's shape, or another kind's: readers skip them, and say so. */
const ODD_IDS = ['__proto__', 'constructor', 'toString', 'layer1', '\u202eevil'];

let service: FakeService;
let dir: string;
let good: string;

const cli =
  (command: string, register: NonNullable<CliOptions['register']>) =>
  (...args: string[]) =>
    runCli([command, ...args], {
      register,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    });
const ls = cli('ls', registerLs);
const diff = cli('diff', registerDiff);
const links = cli('links', registerLinks);
const search = cli('search', registerSearch);
const verify = cli('verify', registerVerify);
const convert = cli('convert', registerConvert);
const restore = cli('restore', registerRestore);
const exportCli = cli('export', registerExport);

interface Spec {
  entries?: Record<string, string>;
  records?: Array<[string, string]>;
  sources?: Record<string, string>;
  prototype?: Record<string, unknown>;
  milestone?: string;
  duplicates?: Array<[string, string]>;
  /** Entries taken out of the zip and the manifest's account-wide files. */
  remove?: string[];
}

/**
 * The one Python of this file that crafts, started on first use: a Python started per archive was
 * most of what the crafting cost (the interpreter's start, zipfile's import).
 */
let crafter: { child: ChildProcess; lines: AsyncIterator<string> } | undefined;

async function craft(name: string, spec: Spec): Promise<string> {
  const out = join(dir, name);
  if (crafter === undefined) {
    const child = spawn(python(), ['-c', CRAFT], { stdio: ['pipe', 'pipe', 'inherit'] });
    crafter = { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
  }
  crafter.child.stdin!.write(`${JSON.stringify([good, out, { proto: PROTO, ...spec }])}\n`);
  const answer = await crafter.lines.next();
  if (answer.done === true) throw new Error(`the crafting Python ended before it made ${name}`);
  if (answer.value !== 'ok') throw new Error(`crafting ${name} failed: ${JSON.parse(answer.value) as string}`);
  return out;
}

async function filesBelow(folder: string): Promise<string[]> {
  const found = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return found.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** The files `action` added anywhere below the test's folder. */
async function filesAddedBy(action: () => Promise<void>): Promise<string[]> {
  const before = new Set(await filesBelow(dir));
  await action();
  return (await filesBelow(dir)).filter((file) => !before.has(file));
}

/** pages.json, layers.json and an element list naming the given ids besides their own. */
function listsNaming(ids: string[]): Spec {
  const json = (value: unknown) => JSON.stringify(value);
  return {
    entries: {
      [`${REV}pages.json`]: json(['page0001', 'page0002', 'page0003', 'page0004', ...ids]),
      [`${REV}layers.json`]: json(['layer1', 'layer2', 'page0001', ...ids]),
      [`${REV}pages/page0001/elements.json`]: json(['element1', ...ids]),
      [`${REV}pages/page0001.json`]: json({ id: 'page0001', name: 'Start', layers: ['layer1', ...ids] }),
      [`${REV}discussions.json`]: json([5, 6, 7, ...ids]),
    },
  };
}

beforeAll(async () => {
  requireTool('python3');
  service = await startFakeService({ seed: 1 });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-attack-crafted-ids-'));
  good = await exportPrototype(service, dir, 'good.zip');
});
afterAll(async () => {
  crafter?.child.stdin!.end();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('names from a crafted archive, printed as JSON', () => {
  const hostile = 'Invoice \u202egpj.exe \u009b31m \u2066x\u2069';

  it('ls, diff and verify --json escape C1 controls and bidi overrides, and read back the same', async () => {
    const named = await craft('named.zip', {
      prototype: { name: hostile, lastUser: 'eve\u202e' },
      milestone: `ms ${hostile}`,
      entries: { [`${REV}pages/\u202eevil.json`]: '{}' },
      records: [[`${REV}pages/\u202eevil.json`, `${API}pages/\u202eevil.json`]],
    });
    const listed = await ls(named, '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(ACTIVE);
    expect(recordsOfType<{ name: string }>(listed.stdout, 'row')[0]?.name).toBe(hostile);

    const changed = await diff(good, named, '--json');
    expect(changed.code).toBe(0);
    expect(changed.stdout).not.toMatch(ACTIVE);
    expect((JSON.parse(changed.stdout) as { changed: Array<{ name: string }> }).changed[0]?.name).toBe(hostile);

    const checked = await verify(named, '--json');
    expect(checked.code).toBe(1);
    expect(checked.stdout).not.toMatch(ACTIVE);
    const problems = (JSON.parse(checked.stdout) as { problems: Array<{ kind: string; path: string }> }).problems;
    expect(problems).toContainEqual(
      expect.objectContaining({ kind: 'unsafe-name', path: `${REV}pages/\u202eevil.json` }),
    );
  });

  it('convert --json escapes them too', async () => {
    const named = await craft('named-convert.zip', { prototype: { name: hostile } });
    const run = await convert(named, '--to', 'excalidraw', '--out', join(dir, 'named-out'), '--json');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(ACTIVE);
    const report = JSON.parse(run.stdout) as { prototypes: Array<{ name: string }> };
    expect(report.prototypes[0]?.name).toBe(hostile);
  });
});

describe('a failure carrying an archived id, printed as JSON', () => {
  it('escapes the C1 controls and bidi overrides of the id it carries', async () => {
    let stdout = '';
    const sink = { write: (chunk: string) => ((stdout += chunk), true) } as unknown as NodeJS.WriteStream;
    const io: CliIO = { stdout: sink, stderr: sink, env: {} };
    const id = 'p\u009b2J\u202eq';
    const before = process.exitCode;
    await runAction(io, 'search', () =>
      Promise.reject(new RabbitError('BAD_ID', 'not a safe page in a name', { data: { id } })),
    );
    process.exitCode = before;
    expect(stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(stdout.split('\n')[0] ?? '')).toMatchObject({ ok: false, error: { code: 'BAD_ID', id } });
  });
});

describe('links given a source that reorders how it reads', () => {
  it('refuses, in every format, to write a source holding a bidi override or isolate', async () => {
    for (const mark of ['\u202e', '\u2066', '\u200f']) {
      const name = `${REV}pages/p${mark}on.json`;
      const archive = await craft(`bidi-${mark.codePointAt(0)}.zip`, {
        entries: { [name]: '{}' },
        records: [[name, `${API}pages/p${mark}on.json`]],
      });
      for (const format of ['csv', 'json', 'sed', 'nginx', 'apache']) {
        const run = await links(archive, '--format', format);
        expect({ format, code: run.code }).toEqual({ format, code: 1 });
        expect(run.stdout + run.stderr).not.toMatch(ACTIVE);
      }
    }
  });
});

describe('entries no export writes', () => {
  it('an entry climbing out with ".." makes ls, links, search and diff refuse the archive, and verify name it', async () => {
    const climbing = await craft('climbing.zip', {
      entries: { 'prototypes/1/r1/pages/../../../x.json': '{"id":"x"}' },
      records: [['prototypes/1/r1/pages/../../../x.json', '/rabbit/api/prototypes/1/pages/x.json']],
    });
    for (const run of [
      await ls(climbing),
      await links(climbing),
      await search(climbing, 'x'),
      await diff(good, climbing),
    ]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/unsafe name/);
    }
    const checked = await verify(climbing, '--json');
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.stdout)).toMatchObject({ ok: false });
  });

  it('verify names a duplicated entry, a listed entry that is missing, and odd revision folders are no prototype of ls', async () => {
    const odd = await craft('odd-entries.zip', {
      entries: {
        [`prototypes/${PROTO}/r007/pages/page0001.json`]: '{"id":"page0001"}',
        [`prototypes/${PROTO}/r-1/pages/page0001.json`]: '{"id":"page0001"}',
        [`prototypes/${PROTO}/r1e3/pages/page0001.json`]: '{"id":"page0001"}',
      },
      // Sources outside the API: a page's source on such a name is refused before anything is read
      // (test/attack/source-path-agreement.test.ts).
      records: [
        [`prototypes/${PROTO}/r007/pages/page0001.json`, '/static/r007/page0001.json'],
        [`prototypes/${PROTO}/r-1/pages/page0001.json`, '/static/r-1/page0001.json'],
        [`prototypes/${PROTO}/r1e3/pages/page0001.json`, '/static/r1e3/page0001.json'],
        [`${REV}pages/ghost.json`, `${API}pages/ghost.json`],
      ],
      duplicates: [[`${REV}pages/page0002.json`, '{"id":"dup"}']],
    });
    const checked = await verify(odd, '--json');
    expect(checked.code).toBe(1);
    const problems = (JSON.parse(checked.stdout) as { problems: Array<{ kind: string; path: string }> }).problems;
    expect(problems).toContainEqual(expect.objectContaining({ kind: 'duplicate', path: `${REV}pages/page0002.json` }));
    expect(problems).toContainEqual(expect.objectContaining({ kind: 'missing', path: `${REV}pages/ghost.json` }));
    const listed = await ls(odd, '--json');
    expect(listed.code).toBe(0);
    expect(recordsOfType<{ id: string; pages: number }>(listed.stdout, 'row').map(({ id }) => id)).toEqual([PROTO]);
  });
});

describe('ids in the archive that are unsafe in a path, or of another kind', () => {
  it('convert skips ids unsafe in a path, an overlong one too, rather than stop, and writes only below its output', async () => {
    const unsafe = await craft('unsafe-lists.zip', listsNaming(UNSAFE_IDS));
    const c1 = await craft('c1-lists.zip', listsNaming(['p\u009b2Jq']));
    for (const [n, archive] of [unsafe, c1].entries()) {
      for (const to of ['svg', 'excalidraw', 'drawio']) {
        const out = join(dir, `unsafe-${n}-${to}`);
        let run: Awaited<ReturnType<typeof convert>> | undefined;
        const added = await filesAddedBy(async () => {
          run = await convert(archive, '--to', to, '--out', out, '--json');
        });
        expect({ to, code: run?.code }).toEqual({ to, code: 3 });
        expect((run?.stdout ?? '') + (run?.stderr ?? '')).not.toMatch(ACTIVE);
        expect(added.length).toBeGreaterThan(0);
        for (const file of added) expect(relative(out, file)).not.toMatch(/^\.\.|\/\.\.\/|\\|x{256}/);
        for (const file of added) expect(relative(out, file)).not.toMatch(ACTIVE);
      }
    }
  });

  it('convert skips ids of no kind or another kind with a note, and writes only below its output folder', async () => {
    const odd = await craft('odd-lists.zip', listsNaming(ODD_IDS));
    for (const to of ['svg', 'excalidraw']) {
      const out = join(dir, `odd-${to}`);
      let run: Awaited<ReturnType<typeof convert>> | undefined;
      const added = await filesAddedBy(async () => {
        run = await convert(odd, '--to', to, '--out', out);
      });
      expect({ to, code: run?.code }).toEqual({ to, code: 3 });
      expect((run?.stdout ?? '') + (run?.stderr ?? '')).not.toMatch(ACTIVE);
      expect(run?.stdout).toMatch(/skipped layer <U\+202E>evil/);
      expect(added.length).toBeGreaterThan(0);
      for (const file of added) expect(relative(out, file)).not.toMatch(/^\.\.|[\u202e\\]/u);
    }
  });

  it('ls, links, search and diff read such lists without a crash or an escape', async () => {
    for (const [name, ids] of [
      ['unsafe-read.zip', UNSAFE_IDS],
      ['odd-read.zip', ODD_IDS],
    ] as const) {
      const archive = await craft(name, listsNaming([...ids]));
      for (const run of [
        await ls(archive),
        await links(archive),
        await search(archive, 'element'),
        await diff(good, archive),
      ]) {
        expect(run.code).toBe(0);
        expect(run.stdout + run.stderr).not.toMatch(ACTIVE);
      }
    }
  });

  it('convert and search read a page and a layer listed twice once, and convert notes it', async () => {
    const json = (value: unknown) => JSON.stringify(value);
    const twice = await craft('twice.zip', {
      entries: {
        [`${REV}pages.json`]: json(['page0001', 'page0002', 'page0003', 'page0004', 'page0001']),
        [`${REV}pages/page0001.json`]: json({ id: 'page0001', name: 'Start', layers: ['layer1', 'layer1'] }),
      },
      remove: [`search/prototype-${PROTO}.js`],
    });
    const run = await convert(twice, '--to', 'svg', '--out', join(dir, 'twice-out'), '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      prototypes: Array<{ pages: number; notes: Array<{ what: string; why: string }> }>;
    };
    expect(report.prototypes[0]?.pages).toBe(4);
    expect(report.prototypes[0]?.notes).toEqual(
      expect.arrayContaining([
        { what: 'the list of pages', why: `${REV}pages.json lists page0001 more than once; each is read once` },
        { what: 'page page0001', why: `${REV}pages/page0001.json lists layer1 more than once; each is read once` },
      ]),
    );
    const found = await search(twice, 'Start');
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^1 hit/m);
  });

  it('search, reading a prototype with no index, skips an overlong id rather than stop', async () => {
    const archive = await craft('scan-long.zip', {
      ...listsNaming(['x'.repeat(300)]),
      remove: [`search/prototype-${PROTO}.js`],
    });
    const run = await search(archive, 'Start');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/reading their files/);
    expect(run.stdout).toMatch(/^1 hit/m);
  });

  it('restore skips them and never sends a request whose path holds one', async () => {
    for (const [name, ids] of [
      ['unsafe-restore.zip', UNSAFE_IDS],
      ['odd-restore.zip', ODD_IDS],
    ] as const) {
      const archive = await craft(name, listsNaming([...ids]));
      service.stats.reset();
      const planned = await restore(archive, '--prototype', PROTO, '--prune', '--dry-run', '--json');
      const done = await restore(archive, '--prototype', PROTO, '--prune', '--json');
      for (const run of [planned, done]) {
        expect(run.code).toBe(3);
        expect(run.stdout + run.stderr).not.toMatch(ACTIVE);
        expect((JSON.parse(run.stdout) as { skipped: unknown[] }).skipped.length).toBeGreaterThan(0);
      }
      const paths = [...service.stats.byPath.keys()];
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) {
        const segments = decodeURIComponent(path).split('/');
        expect(
          segments.filter((segment) => /^\.\.?$|__proto__|constructor|toString|\u202e|x{300}|red/u.test(segment)),
        ).toEqual([]);
        expect(path).not.toMatch(/\/pages\/layer1|%2e|%5c|%00|%1b/i);
      }
    }
  });
});

describe('export --since a crafted archive', () => {
  it('refuses an archive whose sources disagree with its entry names, and writes nothing', async () => {
    const swapped = await craft('swapped.zip', {
      sources: {
        [`${REV}pages/page0001.json`]: `${API}layers/layer1.json`,
        [`${REV}layers/layer1.json`]: `${API}pages/page0001.json`,
        [`${REV}pages/page0002.json`]: '/rabbit/api/prototypes/3/pages/page0002.json',
      },
    });
    const out = join(dir, 'after-swapped.zip');
    const run = await exportCli('--since', swapped, '--prototype', PROTO, '--formats', 'json', '--out', out);
    // Reusing any of it would file a body under another's name: the archive is refused as a whole.
    expect(run.code).toBe(2);
    // The first of them in the manifest's order.
    expect(run.stderr).toContain(`${REV}layers/layer1.json`);
    expect(run.stdout + run.stderr).not.toContain(service.keys.readWrite);
    expect(existsSync(out)).toBe(false);
  });
});

/** A GET of `path` exactly as written: fetch would resolve its dot segments first. */
function rawGet(url: string, path: string): Promise<{ status: number; body: Buffer }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('view of a crafted archive', () => {
  it('serves no path out of the archive, nothing unlisted, and of a duplicated entry only what the manifest recorded', async () => {
    const odd = await craft('view-odd.zip', {
      entries: { [`prototypes/${PROTO}/r007/pages/page0001.json`]: '{"id":"page0001"}' },
      records: [[`${REV}pages/ghost.json`, `${API}pages/ghost.json`]],
      duplicates: [[`${REV}pages/page0002.json`, '{"id":"dup"}']],
    });
    const server = await serveArchive(odd);
    try {
      const root = new URL(server.url).pathname;
      for (const path of [
        `${REV}pages/..%2f..%2f..%2fmanifest.json`,
        `${REV}pages/%2e%2e/%2e%2e/%2e%2e/%2e%2e/manifest.json`,
        `${REV}pages/../../../../../../etc/passwd`,
        '..%5c..%5cetc%5cpasswd',
        `${REV}pages/ghost.json`,
        `${REV}pages/%E2%80%AEevil.json`,
        '%00',
      ]) {
        const got = await rawGet(server.url, `${root}${path}`);
        expect({ path, status: got.status }).toEqual({ path, status: 404 });
      }
      const manifest = (await readArchive(good)).manifest;
      expect(manifest.prototypes[PROTO]?.revision).toBe(1);
      const recorded = manifest.prototypes[PROTO]?.revisions['1']?.files.find(
        (f) => f.path === `${REV}pages/page0002.json`,
      );
      const dup = await rawGet(server.url, `${root}${REV}pages/page0002.json`);
      expect({ status: dup.status, sha256: createHash('sha256').update(dup.body).digest('hex') }).toEqual({
        status: 200,
        sha256: recorded?.sha256,
      });
    } finally {
      await server.close();
    }
  });
});
