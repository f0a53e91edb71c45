import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextStepFor } from '../../src/cli/error-guide.js';
import { unpackBag } from '../../src/convert/bagit/unpack-bag.js';
import { isRabbitError, type RabbitError } from '../../src/core/errors.js';
import { exportWithSidecar } from '../../src/export/checksummed-export.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { plainZip } from '../helpers/plain-zip.js';
import { tempDir } from '../helpers/temp.js';
import { python } from '../helpers/tools.js';
import { flipEntryByte } from '../helpers/zip-layout.js';
import { MANIFEST_HEAD } from '../search/crafted-index.js';
import { sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

// A damaged or foreign archive is no dead end: every reader that refuses one says what to do next,
// and verify says it under its FAILED line. The step is to copy the archive again and check the copy
// against the .sha256 written beside it at export, with a sha256sum line that runs as printed, and
// to let verify name what is damaged; a zip rabbit-export did not write is not one to read with it.

const sh = promisify(execFile);

let service: FakeService;
let keep: string;
/** The export every case damages a copy of, with its team.zip.sha256 beside it. */
let good: string;
let shim: string;
let called: string;

/**
 * The `rabbit-export` a printed line meets on the PATH: it writes down the words the shell gave it
 * and the folder it ran in; the test then runs the CLI in-process with exactly those.
 */
const STAND_IN = `#!/bin/sh
pwd > "$RABBIT_CALLED/cwd" && printf '%s\\0' "$@" > "$RABBIT_CALLED/args"
`;

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  keep = await mkdtemp(join(tmpdir(), 'rabbit-damaged-steps-'));
  await mkdir(join(keep, 'exported'));
  good = join(keep, 'exported', 'team.zip');
  await exportWithSidecar({ out: good, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
  shim = join(keep, 'bin');
  called = join(keep, 'called');
  await mkdir(shim);
  await writeFile(join(shim, 'rabbit-export'), STAND_IN, { mode: 0o755 });
}, 60_000);

afterAll(async () => {
  await service.close();
  await rm(keep, { recursive: true, force: true });
});

/** A shell line as a person pasting it runs it, with the stand-in first on the PATH. */
async function shell(line: string, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await sh('/bin/sh', ['-c', line], {
      env: { PATH: `${shim}:${process.env['PATH'] ?? ''}`, RABBIT_CALLED: called },
      ...(cwd !== undefined ? { cwd } : {}),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** A printed `rabbit-export ...` line: the shell reads its words, the CLI runs them in-process. */
async function asPrinted(line: string): Promise<CliRun> {
  await rm(called, { recursive: true, force: true });
  await mkdir(called);
  const ran = await shell(line);
  expect(ran.code, ran.stderr).toBe(0);
  expect(existsSync(join(called, 'args'))).toBe(true);
  const args = (await readFile(join(called, 'args'), 'utf8')).split('\0').slice(0, -1);
  const cwd = (await readFile(join(called, 'cwd'), 'utf8')).replace(/\n$/, '');
  return runCli(args, { register: 'all', cwd });
}

/** The command in `... (cd '/a b' && sha256sum -c x.sha256); ...`: from `(cd ` to its `)`, quotes kept. */
function checkIn(next: string): string {
  const start = next.indexOf('(cd ');
  expect(start, next).toBeGreaterThanOrEqual(0);
  let quoted = false;
  for (let at = start + 1; at < next.length; at++) {
    // Outside quotes a backslash takes the next character as it is: `'\''` is a quote inside a quoted word.
    if (next[at] === '\\' && !quoted) at++;
    else if (next[at] === "'") quoted = !quoted;
    else if (next[at] === ')' && !quoted) return next.slice(start + 1, at);
  }
  throw new Error(`no end to the command in ${next}`);
}

/** The `rabbit-export verify ...` a step names, up to the words after it. */
function verifyIn(next: string): string {
  const found = /(rabbit-export verify .*) names what is damaged/.exec(next)?.[1];
  expect(found, next).toBeDefined();
  return found as string;
}

/**
 * A copy of the export as a person keeps one: in a folder whose name the shell must have quoted,
 * with the team.zip.sha256 written at export beside it.
 */
async function copyOfExport(): Promise<{ dir: string; archive: string }> {
  const dir = join(await tempDir(), "Anna's copies");
  await mkdir(dir);
  const archive = join(dir, 'team.zip');
  await copyFile(good, archive);
  await copyFile(`${good}.sha256`, `${archive}.sha256`);
  return { dir, archive };
}

const DAMAGE = {
  // What `head -c` of the file leaves: a download or copy cut short.
  'cut short': async (archive: string) => {
    const bytes = await readFile(archive);
    await writeFile(archive, bytes.subarray(0, Math.floor(bytes.length / 2)));
  },
  // Another zip under the archive's name: one that holds no manifest.json.
  'no manifest.json': (archive: string) =>
    writeFile(archive, plainZip([{ name: 'notes.txt', data: Buffer.from('not an export\n') }])),
  'a damaged manifest.json': (archive: string) => flipEntryByte(archive, 'manifest.json'),
  'a damaged search part': (archive: string) => flipEntryByte(archive, 'search/prototype-3.js'),
} as const;
type Damage = keyof typeof DAMAGE;

async function damagedCopy(damage: Damage): Promise<{ dir: string; archive: string }> {
  const copy = await copyOfExport();
  await DAMAGE[damage](copy.archive);
  return copy;
}

/** Each reader on the archive, as a person types it. */
async function read(command: string, archive: string): Promise<CliRun> {
  const args: Record<string, string[]> = {
    ls: ['ls', archive],
    search: ['search', archive, 'page'],
    convert: ['convert', archive, '--to', 'svg', '--out', join(await tempDir(), 'svg')],
    diff: ['diff', good, archive],
  };
  return runCli(args[command] as string[], { register: 'all' });
}

function nextLine(run: CliRun): string {
  const next = run.stderr.split('\n').find((line) => line.startsWith('next: '));
  expect(next, run.stderr).toBeDefined();
  return (next as string).slice('next: '.length);
}

/** The words every reader prints for a damaged `name` in `dir`, `verify` said or not, `foreign` or not. */
function damagedStep(dir: string, name: string, { verify, foreign }: { verify: boolean; foreign: boolean }): string {
  const quoted = (path: string) => (/^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`);
  return (
    `if ${name} is a copy, copy it again, with the ${name}.sha256 written beside the original at export, and ` +
    `check the new copy (cd ${quoted(dir)} && sha256sum -c ${name}.sha256); with no good copy, export again` +
    (verify ? `. rabbit-export verify ${quoted(join(dir, name))} names what is damaged` : '') +
    (foreign ? '; a zip that rabbit-export did not write is not one to read with it' : '')
  );
}

/** The same, for the team.zip of a copy. */
function expectedStep(dir: string, words: { verify: boolean; foreign: boolean }): string {
  return damagedStep(dir, 'team.zip', words);
}

describe('a reader refusing a damaged archive says what to do next', () => {
  const cases: Array<[string, Damage, { verify: boolean; foreign: boolean }]> = [
    ['ls', 'cut short', { verify: false, foreign: false }],
    ['search', 'cut short', { verify: false, foreign: false }],
    ['diff', 'cut short', { verify: false, foreign: false }],
    ['ls', 'no manifest.json', { verify: true, foreign: true }],
    ['search', 'no manifest.json', { verify: true, foreign: true }],
    ['convert', 'no manifest.json', { verify: true, foreign: true }],
    ['ls', 'a damaged manifest.json', { verify: true, foreign: false }],
    ['convert', 'a damaged manifest.json', { verify: true, foreign: false }],
    ['search', 'a damaged search part', { verify: true, foreign: false }],
  ];
  it.each(cases)('%s on an archive %s', async (command, damage, words) => {
    const { dir, archive } = await damagedCopy(damage);
    const run = await read(command, archive);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    // The message as before, then the step on its own line.
    expect(run.stderr).toMatch(/^rabbit-export: [^\n]*team\.zip[^\n]*\nnext: [^\n]+\n$/);
    // A manifest damaged inside reads as JSON that breaks off (told as a zip rabbit-export may not have
    // written, as any manifest that is not JSON), or as an entry that fails to inflate: where the flipped
    // byte lands in the deflated data decides which.
    const told = [expectedStep(dir, words)];
    if (damage === 'a damaged manifest.json') told.push(expectedStep(dir, { verify: true, foreign: true }));
    expect(told).toContain(nextLine(run));
  });

  it('with --json, the error carries the same step and the archive it is about', async () => {
    const { archive } = await damagedCopy('no manifest.json');
    const run = await runCli(['ls', archive, '--json'], { register: 'all' });
    expect(run.code).toBe(1);
    const error = (JSON.parse(run.stdout) as { error: { code: string; next?: string; archive?: string } }).error;
    expect(error.code).toBe('ARCHIVE_CORRUPT');
    expect(error.archive).toBe(archive);
    expect(run.stderr).toContain(`\nnext: ${error.next}\n`);
  });

  it('a path given from its own folder is checked there, without a cd', async () => {
    const { dir } = await damagedCopy('cut short');
    const run = await runCli(['ls', 'team.zip'], { register: 'all', cwd: dir });
    expect(nextLine(run)).toContain('check the new copy (sha256sum -c team.zip.sha256);');
    const check = /\((sha256sum -c team\.zip\.sha256)\)/.exec(nextLine(run))?.[1] as string;
    await DAMAGE['cut short'](join(dir, 'team.zip'));
    expect((await shell(check, dir)).code).toBe(1);
    await copyFile(good, join(dir, 'team.zip'));
    expect(await shell(check, dir)).toMatchObject({ code: 0, stdout: 'team.zip: OK\n' });
  });
});

describe('a value no output of links can hold', () => {
  it('refused while the manifest streams, it is told with the archive it came from', async () => {
    const manifest = sampleManifest();
    // A bidi override reorders how a rule reads: the manifest's check lets it by, links refuses it.
    manifest.files.push({
      path: 'assets/turned.css',
      source: '/assets/p\u202Eon.css',
      sha256: 'a'.repeat(64),
      size: 1,
      contentType: 'text/css',
      lastModified: null,
    });
    const dir = join(await tempDir(), 'links');
    await mkdir(dir);
    const archive = await writeSampleArchive(dir, { manifest });
    const run = await runCli(['links', archive, '--format', 'nginx'], { register: 'all' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('holds a control character (U+202E)');
    expect(nextLine(run)).toBe(damagedStep(dir, basename(archive), { verify: true, foreign: true }));
  });
});

describe('the printed steps work as printed', () => {
  it.each(Object.keys(DAMAGE) as Damage[])(
    'an archive with %s: the sha256sum line fails on it, passes on a new copy, and the reader then runs',
    async (damage) => {
      const { archive } = await damagedCopy(damage);
      const command = damage === 'a damaged search part' ? 'search' : 'ls';
      const run = await read(command, archive);
      const check = checkIn(nextLine(run));
      // The real sha256sum, through the shell, as pasted: it tells the damaged copy from the export.
      const before = await shell(check);
      expect(before.code, before.stderr).toBe(1);
      expect(before.stdout).toBe('team.zip: FAILED\n');
      // Copied again, with its .sha256 from beside the original.
      await copyFile(good, archive);
      await copyFile(`${good}.sha256`, `${archive}.sha256`);
      expect(await shell(check)).toMatchObject({ code: 0, stdout: 'team.zip: OK\n' });
      expect((await read(command, archive)).code).toBe(0);
    },
  );

  it.each([
    ['no manifest.json', /manifest-missing +manifest\.json: /],
    ['a damaged search part', /crc-error +search\/prototype-3\.js: damaged: /],
  ] as Array<[Damage, RegExp]>)(
    'an archive with %s: the rabbit-export verify printed names what is damaged',
    async (damage, named) => {
      const { archive } = await damagedCopy(damage);
      const run = await read(damage === 'a damaged search part' ? 'search' : 'ls', archive);
      const verified = await asPrinted(verifyIn(nextLine(run)));
      expect(verified.code).toBe(1);
      expect(verified.stdout).toMatch(named);
    },
  );
});

describe("verify's FAILED says what to do next, in the readers' words", () => {
  it.each([
    ['cut short', /^FAILED: team\.zip is a zip archive whose end is missing or damaged/, false],
    ['no manifest.json', /^ {2}manifest-missing +manifest\.json: .*\nFAILED: team\.zip has 1 problem/, true],
    ['a damaged search part', /^ {2}crc-error +search\/prototype-3\.js: .*\nFAILED: team\.zip has 1 problem/, false],
  ] as Array<[Damage, RegExp, boolean]>)('an archive %s', async (damage, failed, foreign) => {
    const { dir, archive } = await damagedCopy(damage);
    const run = await runCli(['verify', archive, '--quiet'], { register: 'all' });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(failed);
    // Verify is the command that names what is damaged: its step leaves itself out.
    expect(run.stdout.endsWith(`\nnext: ${expectedStep(dir, { verify: false, foreign })}\n`), run.stdout).toBe(true);
    expect(run.stderr).toBe('');
  });

  it('a file that does not match its .sha256, every entry inside intact', async () => {
    const { dir, archive } = await copyOfExport();
    await writeFile(`${archive}.sha256`, `${'0'.repeat(64)}  team.zip\n`);
    const run = await runCli(['verify', archive, '--quiet'], { register: 'all' });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('FAILED: the file does not match');
    expect(run.stdout.endsWith(`\nnext: ${expectedStep(dir, { verify: false, foreign: false })}\n`)).toBe(true);
  });

  it('an entry no export wrote: the step says so too', async () => {
    const { dir, archive } = await copyOfExport();
    // Python's zipfile adds it and writes the directory again: a zip put together after the export.
    await sh(python(), [
      '-c',
      'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "a").writestr("extra.txt", "x")',
      archive,
    ]);
    const run = await runCli(['verify', archive, '--quiet'], { register: 'all' });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^ {2}unlisted +extra\.txt: /m);
    expect(run.stdout.endsWith(`\nnext: ${expectedStep(dir, { verify: false, foreign: true })}\n`), run.stdout).toBe(
      true,
    );
  });

  it('an intact archive: no step', async () => {
    const { archive } = await copyOfExport();
    const run = await runCli(['verify', archive, '--quiet'], { register: 'all' });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('next:');
  });

  it('--json keeps its summary as it was: no field the schema does not know', async () => {
    const { archive } = await damagedCopy('cut short');
    const run = await runCli(['verify', archive, '--json'], { register: 'all' });
    expect(Object.keys(JSON.parse(run.stdout) as object).sort()).toEqual(
      [
        'type',
        'schemaVersion',
        'command',
        'ok',
        'exitCode',
        'path',
        'checked',
        'bytes',
        'problems',
        'problemCount',
        'complete',
        'sidecar',
      ].sort(),
    );
  });
});

describe('no advice that does not fit', () => {
  /** A zip holding a manifest that opens with `head`, as rabbit-export writes one. */
  async function archiveWithManifest(head: Record<string, unknown>): Promise<string> {
    const archive = join(await tempDir(), 'team.zip');
    const manifest = JSON.stringify({ ...head, prototypes: {}, files: [], errors: [] });
    await writeFile(archive, plainZip([{ name: 'manifest.json', data: Buffer.from(manifest) }]));
    return archive;
  }

  it('a newer format: update rabbit-export, not "copy it again" nor "not written by rabbit-export"', async () => {
    const archive = await archiveWithManifest({ ...MANIFEST_HEAD, formatVersion: 2 });
    for (const args of [
      ['ls', archive],
      ['search', archive, 'page'],
      ['verify', archive, '--quiet'],
    ]) {
      const run = await runCli(args, { register: 'all' });
      expect(run.code, args[0]).toBe(1);
      const said = run.stdout + run.stderr;
      expect(said, args[0]).toContain('formatVersion is 2, newer than this tool reads (1); update rabbit-export');
      expect(said, args[0]).toContain(
        'next: install a newer release of rabbit-export (rabbit-export --version says which this one is), then run the same command again\n',
      );
      expect(said, args[0]).not.toMatch(/copy it again|export again|did not write|not written by/);
    }
  });

  it('a manifest of no format at all: the damaged-archive step, said as for a zip rabbit-export may not have written', async () => {
    const archive = await archiveWithManifest({ hello: 'world' });
    const run = await runCli(['ls', archive], { register: 'all' });
    expect(run.stderr).toContain('formatVersion is missing');
    expect(nextLine(run)).toMatch(
      /copy it again.*; a zip that rabbit-export did not write is not one to read with it$/,
    );
  });

  it('a bag convert serialized that does not read back: the package is invalid, not an archive to copy again', async () => {
    const dir = await tempDir();
    const bag = join(dir, 'team.zip');
    const whole = plainZip([{ name: 'team/bagit.txt', data: Buffer.from('BagIt-Version: 1.0\n') }]);
    await writeFile(bag, whole.subarray(0, 40));
    const error = await unpackBag(bag, join(dir, 'unpacked')).catch((thrown: unknown) => thrown);
    expect(isRabbitError(error, 'PACKAGE_INVALID'), String(error)).toBe(true);
    expect(nextStepFor(error as RabbitError)).toBeUndefined();
  });

  it('a file that is not there: nothing to copy again', async () => {
    const run = await runCli(['ls', join(await tempDir(), 'team.zip')], { register: 'all' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('team.zip does not exist');
    expect(run.stderr).not.toContain('sha256sum');
  });
});
