import { copyFile, mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runCli, startCli, type CliRun } from '../helpers/cli.js';
import { readArchive } from '../helpers/archive.js';
import { zipLayout } from '../helpers/zip-layout.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { tempDir } from '../helpers/temp.js';
import { requestHold, type RequestHold } from '../helpers/sleep-gate.js';
import { until } from '../helpers/until.js';
import { useFakeService } from '../helpers/fake-service.js';
import { recordsOfType } from '../helpers/json-records.js';

let service: FakeService;
let hold: RequestHold;
// Every request goes through the hold: answered at once, unless a test has it stop the run.
useFakeService({ latencyMs: 600_000, sleep: (ms) => hold.sleep(ms) }, (fixture) => {
  service = fixture.service;
  hold = requestHold();
});

const env = (key = service.keys.readOnly): Record<string, string> => ({
  RABBIT_API_KEY: key,
  RABBIT_BASE_URL: service.baseUrl,
});

// The built CLI, spawned, where the process is what is tested: what main.ts alone does (the heap
// setting at start-up), signals, and all a run writes to stdout or stderr (exactly one line, the
// --json line of a usage error, nothing, never the key: a stray write to the process's own streams
// would get past an in-process run). The other runs go in-process: help, the version and usage
// errors through the whole command line (src/cli/program.ts, as main.ts runs it), the rest
// through the same command registrations and runAction: the exit code and what their output contains.
const wholeCli = { register: 'all' } as const;
const exportCommand = { register: registerExport };
const verifyCommand = { register: registerVerify };

/**
 * `export --json` of the sample account by the built CLI, its key read from `--api-key-file`, run
 * once for the file: the run itself is judged by the --json and --api-key-file tests, and its
 * archive is copied into `dir` for each test that reads an archive (verify, ls), the service being
 * the same for each.
 */
let exported: Promise<{ run: CliRun; out: string; key: string }> | undefined;
let kept: string | undefined;
afterAll(async () => {
  if (kept !== undefined) await rm(kept, { recursive: true, force: true });
});
const keyFileExport = (): Promise<{ run: CliRun; out: string; key: string }> =>
  (exported ??= (async () => {
    kept = await mkdtemp(join(tmpdir(), 'rabbit-cli-kept-'));
    const keyFile = join(kept, 'keys.txt');
    const key = service.keys.readOnly;
    await writeFile(keyFile, `# our key\n${key}\n`);
    const out = join(kept, 'k.zip');
    const run = await runCli([
      'export',
      '--out',
      out,
      '--api-key-file',
      keyFile,
      '--base-url',
      service.baseUrl,
      '--json',
    ]);
    return { run, out, key };
  })());
async function keptExport(dir: string): Promise<string> {
  const { run, out } = await keyFileExport();
  if (run.code !== 0) throw new Error(`export --json exited ${run.code}: ${run.stderr}`);
  const copy = join(dir, 'team.zip');
  await copyFile(out, copy);
  return copy;
}

describe('rabbit-export CLI', () => {
  it('without a key exits 2 and names both ways to give one', async () => {
    const dir = await tempDir();
    const run = await runCli(['export', '--out', join(dir, 'x.zip')], wholeCli);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('RABBIT_API_KEY');
    expect(run.stderr).toContain('--api-key-file');
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    [['--help'], 0, 'Examples:'],
    [['export', '--help'], 0, 'Examples:'],
    [['--version'], 0, JSON.parse('"0.1.0"') as string],
    [['export'], 2, "required option '-o, --out"],
    [['export', '--out', 'x.zip', '--concurrency', 'many'], 2, '--concurrency takes a whole number'],
    [['frobnicate'], 2, 'unknown command'],
  ])('%j exits %i', async (args, code, text) => {
    const run = await runCli(args, wholeCli);
    expect(run.code).toBe(code);
    expect(run.stdout + run.stderr).toContain(text);
  });

  it('--version prints the version and nothing else: the heap setting made at start-up is one this Node knows', async () => {
    // V8 prints "unrecognized flag" for a setting it does not know (src/cli/heap-growth.ts).
    const run = await startCli(['--version']).done;
    expect(run).toMatchObject({ code: 0, stdout: `${JSON.parse('"0.1.0"') as string}\n`, stderr: '' });
  });

  it('a mistyped flag with --json still prints the one JSON line a log expects, exit 2', async () => {
    const run = await startCli(['backup', '--dir', await tempDir(), '--keep-dayly', '7', '--json'], { env: env() })
      .done;
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({
      type: 'summary',
      schemaVersion: 1,
      command: 'backup',
      ok: false,
      exitCode: 2,
      error: { code: 'USAGE', message: "unknown option '--keep-dayly'\n(Did you mean --keep-daily?)" },
    });
    expect(run.stderr).toContain("unknown option '--keep-dayly'");
    expect(service.stats.requests).toBe(0);
  });

  it('exports with --json: one summary line on stdout, exit 0, the key nowhere', async () => {
    const { run, out, key } = await keyFileExport();
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0] as string) as { files: number };
    expect(summary).toMatchObject({ ok: true, exitCode: 0, complete: true, prototypes: 5, requests: 197, errors: 0 });
    const { manifest } = await readArchive(out);
    expect(summary.files).toBe(allFileEntries(manifest).length);
    expect(run.stdout + run.stderr).not.toContain(key);
  });

  it('reads keys from --api-key-file', async () => {
    // The environment the built CLI ran with held no key: only the file gave it one.
    const { run } = await keyFileExport();
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, complete: true });
  });

  it('--quiet prints nothing, on stdout or stderr, when the run succeeds', async () => {
    // One prototype's JSON: what --quiet keeps quiet is the same whatever the run fetches.
    const out = join(await tempDir(), 'q.zip');
    const run = await runCli(['export', '--out', out, '--prototype', '42', '--formats', 'json', '--quiet'], {
      env: env(),
    });
    expect(run).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('a refused key exits 1 within seconds, saying so, leaving nothing', async () => {
    const dir = await tempDir();
    const run = await runCli(['export', '--out', join(dir, 'x.zip')], { env: env(service.keys.invalid) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/refused the API key/);
    expect(run.stderr).not.toContain(service.keys.invalid);
    // Within seconds because nothing is retried: the service heard the one refused request.
    expect(service.stats.requests).toBe(1);
    expect([...service.stats.statuses]).toEqual([[401, 1]]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('exits 3 on an incomplete archive, names what failed and how to fetch it', async () => {
    const broken = '/rabbit/api/prototypes/17/pages/page1.png';
    service.setFaults({ paths: [{ path: broken, kind: '404' }] });
    const dir = await tempDir();
    const run = await runCli(['export', '--out', join(dir, 'p.zip')], { ...exportCommand, env: env() });
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('INCOMPLETE');
    expect(run.stderr).toContain(broken);
    expect(run.stderr).toContain('rabbit-export export --out');
    expect(run.stderr).toMatch(/--since \S*p\.zip --force/);

    // The suggested command fetches what is missing and copies the rest, verified.
    service.setFaults(undefined);
    service.stats.reset();
    const out = join(dir, 'p.zip');
    const fill = await runCli(['export', '--out', out, '--since', out, '--force', '--json'], {
      ...exportCommand,
      env: env(),
    });
    expect(fill.code).toBe(0);
    expect(service.stats.byPath.get(broken)).toBe(1);
    // The list, the five prototypes' metadata, the missing PNG and the five page requisites.
    expect(service.stats.requests).toBe(1 + 5 + 1 + 5);
    expect((await runCli(['verify', out], verifyCommand)).code).toBe(0);
  });

  it('verify: 0 on an intact archive; 1 naming a flipped byte; 1 with one line and its next step for a truncated file', async () => {
    const dir = await tempDir();
    const out = await keptExport(dir);
    const intact = await runCli(['verify', out], verifyCommand);
    expect(intact.code).toBe(0);

    // Flip one byte inside a stored PNG entry's data.
    const png = [...(await zipLayout(out)).values()].find((e) => e.name.endsWith('.png') && e.compressionMethod === 0);
    if (png === undefined) throw new Error('the export holds no stored PNG to damage');
    const bytes = await readFile(out);
    const dataAt = png.dataOffset + 40;
    const flipped = Buffer.from(bytes);
    flipped[dataAt] = (flipped[dataAt] as number) ^ 0xff;
    const corrupt = join(dir, 'corrupt.zip');
    await writeFile(corrupt, flipped);
    const bad = await runCli(['verify', corrupt], verifyCommand);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(png.name);

    const truncated = join(dir, 'truncated.zip');
    await writeFile(truncated, bytes);
    await truncate(truncated, Math.floor(bytes.length / 2));
    const cut = await runCli(['verify', truncated]);
    expect(cut.code).toBe(1);
    const said = (cut.stdout + cut.stderr).trim().split('\n');
    expect(said).toHaveLength(2);
    expect(said[0]).toMatch(/^FAILED: truncated\.zip is a zip archive whose end is missing/);
    expect(said[1]).toMatch(/^next: if truncated\.zip is a copy, copy it again/);
    expect(cut.stdout + cut.stderr).not.toMatch(/\n\s+at /);
  });

  it('ls lists every prototype with its counts', async () => {
    const out = await keptExport(await tempDir());
    const run = await runCli(['ls', out], { register: registerLs });
    expect(run.code).toBe(0);
    for (const id of ['3', '17', '42', '1001', '1002']) expect(run.stdout).toMatch(new RegExp(`^${id}\\s`, 'm'));
    const json = await runCli(['ls', out, '--json'], { register: registerLs });
    const rows = recordsOfType<{ id: string; pages: number }>(json.stdout, 'row');
    expect(rows.find((r) => r.id === '42')?.pages).toBe(2);
  });

  it('SIGINT stops at once with exit 130, nothing at --out, and says how to resume; the same command then finishes', async () => {
    const dir = await tempDir();
    const out = join(dir, 'i.zip');
    // The 40th answer is held, the others come at once: a run that waited for its requests in
    // flight would not end by itself, and one that went on after the signal would make the rest.
    const held = hold.one(40);
    const { child, done } = startCli(['export', '--out', out, '--concurrency', '2'], { env: env() });
    await held;
    const before = service.stats.requests;
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    // It stopped at once rather than finishing the account's 197 requests: past the two in flight,
    // only what went out before the signal arrived, far less than the half of the rest.
    expect(service.stats.requests - before).toBeLessThan((197 - before) / 2);
    expect(run.stderr).toMatch(/run the same command again/i);
    expect(await readdir(dir)).toEqual(['.i.zip.rabbit-work']);
    hold.release();
    const again = await runCli(['export', '--out', out, '--concurrency', '2'], { ...exportCommand, env: env() });
    expect(again.code).toBe(0);
    expect((await runCli(['verify', out], verifyCommand)).code).toBe(0);
  });

  it('after kill -9 nothing is at --out and the same command resumes', async () => {
    const dir = await tempDir();
    const out = join(dir, 'k9.zip');
    const journal = join(dir, '.k9.zip.rabbit-work', 'journal.jsonl');
    const savedIn = async (): Promise<number> =>
      (await readFile(journal, 'utf8')).split('\n').filter((line) => line.includes('"t":"file"')).length;
    // Held from the 100th answer on: the run stands still in its middle, and is killed once its
    // journal, written as it goes, holds more than 50 bodies (a journal written only at the end
    // never does, and the wait fails).
    const held = hold.from(100);
    const { child, done } = startCli(['export', '--out', out, '--concurrency', '2'], { env: env() });
    await held;
    await until(async () => (await savedIn()) > 50, { what: 'more than 50 bodies in the journal' });
    child.kill('SIGKILL');
    await done;
    expect((await readdir(dir)).filter((name) => !name.startsWith('.'))).toEqual([]);
    const saved = await savedIn();
    expect(saved).toBeGreaterThan(50);
    hold.release();
    service.stats.reset();
    const again = await runCli(['export', '--out', out, '--json'], { ...exportCommand, env: env() });
    expect(again.code).toBe(0);
    // What was saved before the kill is not fetched again: at most 10 % of a full export (197) more.
    expect(service.stats.requests).toBeLessThanOrEqual(197 - saved + 20);
    expect((await runCli(['verify', out], verifyCommand)).code).toBe(0);
  });
});
