import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { formatOutcome } from '../../src/cli/format-restore.js';
import type { RestoreReport } from '../../src/restore/report.js';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runCli as runAnyCli, startCli, type CliOptions, type CliRun } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// issue 45: every next step the tool prints can succeed when run as printed. The printed command
// is run by a shell, as a person pasting it would, with `rabbit-export` on the PATH (see asPrinted).

const sh = promisify(execFile);

/**
 * The runs whose message holds the next step go in-process, through the command's own registration
 * and runAction (what they print is what is judged here, not the process); the next step itself
 * runs as printed, by a shell (asPrinted).
 */
const REGISTER = {
  convert: registerConvert,
  export: registerExport,
  restore: registerRestore,
  search: registerSearch,
  verify: registerVerify,
};
function runCli(args: string[], options: Omit<CliOptions, 'register'> = {}): Promise<CliRun> {
  const register = REGISTER[args[0] as keyof typeof REGISTER];
  if (register === undefined) throw new Error(`next-steps: no registration for ${args[0]}`);
  return runAnyCli(args, { ...options, register });
}

let service: FakeService;
let keep: string;
let shim: string;
/** Where the `rabbit-export` on the shell's PATH writes down how it was called. */
let called: string;

/**
 * The `rabbit-export` a printed line meets on the PATH: it writes down the words the shell gave it,
 * the folder it ran in and the environment the line left it, and ends. A line that would run it
 * twice fails, so none is left out.
 */
const STAND_IN = `#!/bin/sh
if [ -e "$RABBIT_CALLED/args" ]; then echo 'rabbit-export: this line runs it twice' >&2; exit 97; fi
pwd > "$RABBIT_CALLED/cwd" && env -0 > "$RABBIT_CALLED/env" && printf '%s\\0' "$@" > "$RABBIT_CALLED/args"
`;

/**
 * Runs a printed command line through /bin/sh, as a person pasting it would. What the shell does
 * with it (the quoting, a `cd`, a variable set before the command) is what it does for that person;
 * the `rabbit-export` it calls is the CLI's whole program, as main.ts runs it, here in the worker
 * once the line has ended, with exactly the words, folder and environment the shell gave it
 * (STAND_IN). Node's start for each printed step is not what a step can get wrong.
 */
async function asPrinted(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  await rm(called, { recursive: true, force: true });
  await mkdir(called);
  let shell: { code: number; stdout: string; stderr: string };
  try {
    const { stdout, stderr } = await sh('/bin/sh', ['-c', command], {
      env: { PATH: `${shim}:${process.env['PATH'] ?? ''}`, RABBIT_CALLED: called },
      timeout: 120_000,
    });
    shell = { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    shell = { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
  if (shell.code !== 0 || !existsSync(join(called, 'args'))) return shell;
  const fields = async (name: string): Promise<string[]> =>
    (await readFile(join(called, name), 'utf8')).split('\0').slice(0, -1);
  const env = Object.fromEntries(
    (await fields('env'))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)])
      .filter(([name]) => name !== 'RABBIT_CALLED'),
  ) as Record<string, string>;
  const cwd = (await readFile(join(called, 'cwd'), 'utf8')).replace(/\n$/, '');
  const run = await runAnyCli(await fields('args'), { register: 'all', cwd, env });
  return { code: run.code ?? -1, stdout: shell.stdout + run.stdout, stderr: shell.stderr + run.stderr };
}

/** The command in a line such as `... (mkdir -p '/a b'), or ...`: from `(word ` to its `)`, quotes kept. */
function commandIn(text: string, word: string): string {
  const start = text.indexOf(`(${word} `);
  expect(start, text).toBeGreaterThanOrEqual(0);
  let quoted = false;
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === "'") quoted = !quoted;
    else if (text[at] === ')' && !quoted) return text.slice(start + 1, at);
  }
  throw new Error(`no end to the command in ${text}`);
}

/**
 * An export of the sample account, made once and copied into `dir` as team.zip for each caller: the
 * service is never changed here, so every export of it holds the same prototypes, and what these
 * tests run is the command a message printed, not the export before it.
 */
let exported: Promise<string> | undefined;
async function teamArchive(dir: string): Promise<string> {
  exported ??= (async () => {
    const out = join(keep, 'team.zip');
    await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    return out;
  })();
  const archive = join(dir, 'team.zip');
  await copyFile(await exported, archive);
  return archive;
}

const env = (): Record<string, string> => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

/**
 * What the exports below fetch: one prototype's JSON. What stops them (a missing folder, a lock, a
 * key file others may read) is met before anything is fetched, whatever the selection; what is
 * judged after the printed step is that the export then runs, not how much it holds.
 */
const ONE_PROTOTYPE = ['--prototype', '42', '--formats', 'json'];

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  keep = await mkdtemp(join(tmpdir(), 'rabbit-next-steps-'));
  shim = join(keep, 'bin');
  called = join(keep, 'called');
  await mkdir(shim);
  await writeFile(join(shim, 'rabbit-export'), STAND_IN, { mode: 0o755 });
});

afterAll(async () => {
  await service.close();
  await rm(keep, { recursive: true, force: true });
});

describe('paths in a next step are quoted for the shell', () => {
  // A folder name with a space: unquoted, `mkdir -p` makes two other folders and `rm` removes two other paths.
  it('a missing folder: the mkdir -p printed makes it, and the export then runs', async () => {
    const dir = join(await tempDir(), 'my backups');
    const out = join(dir, 'nightly', 'team.zip');
    await mkdir(dir);
    const run = await runCli(['export', '--out', out, ...ONE_PROTOTYPE], { env: env() });
    expect(run.code).toBe(2);
    const next = run.stderr.split('\n').find((line) => line.startsWith('next: ')) ?? '';
    expect((await asPrinted(commandIn(next, 'mkdir'))).code).toBe(0);
    expect((await stat(join(dir, 'nightly'))).isDirectory()).toBe(true);
    expect((await runCli(['export', '--out', out, ...ONE_PROTOTYPE, '--quiet'], { env: env() })).code).toBe(0);
  });

  it('a lock that does not say who holds it: the rm printed removes it, and the export then runs', async () => {
    const dir = join(await tempDir(), 'my backups');
    const work = join(dir, '.team.zip.rabbit-work');
    await mkdir(work, { recursive: true, mode: 0o700 });
    await writeFile(join(work, 'lock'), '', { mode: 0o600 });
    const out = join(dir, 'team.zip');
    const run = await runCli(['export', '--out', out, ...ONE_PROTOTYPE], { env: env() });
    expect(run.code).toBe(1);
    expect((await asPrinted(commandIn(run.stderr, 'rm'))).code).toBe(0);
    expect(existsSync(join(work, 'lock'))).toBe(false);
    expect((await runCli(['export', '--out', out, ...ONE_PROTOTYPE, '--quiet'], { env: env() })).code).toBe(0);
  });

  it('a key file others may read: the chmod printed makes it the user’s alone', async () => {
    const dir = join(await tempDir(), 'my keys');
    await mkdir(dir);
    const keys = join(dir, 'team keys.txt');
    await writeFile(keys, `${service.keys.readOnly}\n`);
    await chmod(keys, 0o644);
    const run = await runCli(
      [
        'export',
        '--out',
        join(dir, 'k.zip'),
        '--api-key-file',
        keys,
        '--base-url',
        service.baseUrl,
        ...ONE_PROTOTYPE,
        '--quiet',
      ],
      { env: {} },
    );
    expect(run.code).toBe(0);
    const warning = run.stderr.split('\n').find((line) => line.includes('make it yours alone: ')) ?? '';
    expect((await asPrinted(warning.slice(warning.indexOf('make it yours alone: ') + 21))).code).toBe(0);
    expect((await stat(keys)).mode & 0o777).toBe(0o600);
  });
});

describe('--prototype naming what is not there', () => {
  let archive: string;
  beforeAll(async () => {
    // Nine prototypes: more than the refusal names, so `ls` is the way to the rest. Their JSON
    // alone: what search and ls read, and what the refusal names, is the prototypes' ids and text.
    const many = await startFakeService({ seed: 1, dataset: { prototypes: 6 } });
    try {
      archive = join(keep, 'many prototypes.zip');
      await exportAccount({
        out: archive,
        baseUrl: many.baseUrl,
        keys: [many.keys.readOnly],
        formats: new Set(['json'] as const),
      });
    } finally {
      await many.close();
    }
  }, 60_000);

  it('of an archive holding more than the message names: the ls printed lists them all', async () => {
    const run = await runCli(['search', archive, 'page', '--prototype', '999']);
    expect(run.code).toBe(2);
    const next = run.stderr.split('\n').find((line) => line.startsWith('next: ')) ?? '';
    expect(next).not.toContain('999');
    const ls = /\((rabbit-export ls .*) lists them all\)/.exec(next)?.[1];
    expect(ls, next).toBeDefined();
    const listed = await asPrinted(`${ls} --json`);
    expect(listed.code).toBe(0);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; id?: string })
      .filter((record) => record.type === 'row');
    expect(rows.length).toBeGreaterThan(5);
    // One of them, as the next step says: the search runs.
    const one = rows.at(-1)?.id ?? '';
    expect((await runCli(['search', archive, 'page', '--prototype', one])).code).toBe(0);
  });

  it('restore, which needs --prototype: the next step does not offer to leave it out, and one it names restores', async () => {
    const dir = await tempDir();
    const saved = await teamArchive(dir);
    const keyed = { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl };
    const run = await runCli(['restore', saved, '--prototype', '999'], { env: keyed });
    expect(run.code).toBe(2);
    const next = run.stderr.split('\n').find((line) => line.startsWith('next: ')) ?? '';
    expect(next).toBe('next: run again with --prototype naming one of the ids it holds');
    // Without --prototype, as the old step offered, restore cannot run at all.
    expect((await runCli(['restore', saved], { env: keyed })).code).toBe(2);
    const held = /it holds prototypes? ([\d, and]+)/.exec(run.stderr)?.[1]?.split(/, | and /) ?? [];
    expect(held).toContain('1001');
    expect((await runCli(['restore', saved, '--prototype', '1001', '--dry-run'], { env: keyed })).code).toBe(0);
  });
});

describe('verify --against-live stopped by its budget', () => {
  it('among the lists: the --max-requests printed checks them all, where another --seed would stop again', async () => {
    const dir = await tempDir();
    const archive = await teamArchive(dir);
    const keyed = { RABBIT_API_KEY: service.keys.readOnly };
    const first = await runCli(['verify', archive, '--against-live', '--max-requests', '3', '--seed', '7'], {
      env: keyed,
    });
    const lists = (stdout: string): string[] =>
      /and (\d+) of (\d+) lists and prototypes/.exec(stdout)?.slice(1) ?? ['no coverage line', stdout];
    const [checked, total] = lists(first.stdout);
    expect(Number(checked)).toBeLessThan(Number(total));
    const stop = first.stdout.split('\n').find((line) => line.startsWith('stopped at --max-requests')) ?? '';
    // What the line says to change: a --max-requests, or else another --seed.
    const budget = /--max-requests (\d+)/.exec(stop)?.[1];
    const again = await runCli(
      ['verify', archive, '--against-live', '--max-requests', budget ?? '3', '--seed', budget ? '7' : '8'],
      { env: keyed },
    );
    const [after, all] = lists(again.stdout);
    expect(after, stop).toBe(all);
    expect(again.code).toBe(0);
  });
});

describe('restore: what the kept journal is good for', () => {
  const report = (failed: RestoreReport['failed']): RestoreReport => ({
    prototype: '3',
    dryRun: false,
    planned: { create: 2, update: 0, delete: 0 },
    done: { create: 1, update: 0, delete: 0 },
    unchanged: 0,
    skipped: [],
    idMap: {},
    extraAttributes: [],
    strays: [],
    failed,
    journal: '/tmp/.team.zip.restore-3.jsonl',
  });
  const failure = (status?: number): RestoreReport['failed'][number] => ({
    op: 'create',
    parent: 'page1',
    element: 'element9',
    ...(status !== undefined ? { status } : {}),
    message: 'refused',
  });

  it.each([
    [[failure(400)], false],
    [[failure(413), failure(400)], false],
    [[failure(503)], true],
    [[failure(429)], true],
    [[failure()], true],
    [[failure(400), failure(502)], true],
  ])('failed writes %j: a rerun offered: %s', (failed, offered) => {
    const text = formatOutcome(report(failed));
    expect(text.includes('running the same command again'), text).toBe(offered);
  });
});

describe('convert that lacked fonts', () => {
  // What it prints then (test/convert/font-packages.test.ts): install the font "and run the same
  // convert again with --force". The --force is what makes that rerun possible: the same command
  // alone meets the documents the first run left in --out.
  it('the same convert again is refused for the documents of the first; with --force it runs', async () => {
    const dir = await tempDir();
    const archive = await teamArchive(dir);
    const args = ['convert', archive, '--to', 'pdf', '--out', join(dir, 'pdf'), '--prototype', '17'];
    expect((await runCli(args)).code).toBe(0);
    const plain = await runCli(args);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('is not empty, and what it holds is not replaced without --force');
    const again = await runCli([...args, '--force']);
    expect(again.code, again.stderr).toBe(0);
  }, 120_000);
});

describe('serve', () => {
  it('the export it suggests runs as printed, also where an earlier one left its archive', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'sample.zip'), 'an earlier try');
    const { child, done } = startCli(['serve', '--port', '0'], { cwd });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          const found = text.split('\n').find((each) => each.startsWith('try: '));
          if (found !== undefined) resolve(found);
        });
        child.once('exit', () => reject(new Error(`serve ended before its try line: ${text}`)));
      });
      const run = await asPrinted(`cd '${cwd}' && ${line.slice('try: '.length)} --quiet`);
      expect(run.code, run.stderr).toBe(0);
      expect(await readFile(join(cwd, 'sample.zip'), 'utf8')).toBe('an earlier try');
    } finally {
      child.kill('SIGTERM');
      await done;
    }
  }, 120_000);
});
