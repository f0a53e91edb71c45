import { spawn, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import type { CliIO } from '../../src/cli/run.js';
import { sha256OfFile } from '../../src/archive/checksum-file.js';
import { BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { useFakeService } from '../helpers/fake-service.js';

// issue 30: an off-site, encrypted copy without a temporary file of our own making:
// rabbit-export export --out - | age -r KEY | rclone rcat remote:path

/**
 * The sample's three fixed prototypes with some 16 KiB of noise in each page image: under half the
 * requests of the whole sample (the spawned CLI's work), and an archive of some 180 KiB, well over
 * what a pipe holds (64 KiB), so a reader that stops early leaves the CLI a write that must fail.
 */
const DATASET = { prototypes: 0, pngWidth: 80, pngHeight: 60, pngPaddingBytes: 16_384 } as const;

let service: FakeService;
let dir: string;
useFakeService({ dataset: DATASET }, (fixture) => ({ service, dir } = fixture));

interface Piped {
  /** Exit status of each command of the pipeline, as bash's PIPESTATUS has them. */
  status: number[];
  stderr: string;
}

/** Runs a bash pipeline whose first command is the built CLI, with the exit status of each of its commands. */
function pipeline(script: string, env: Record<string, string>): Promise<Piped> {
  const rabbit = 'rabbit-export() { "$NODE_BIN" "$CLI_BIN" "$@"; }';
  const child = spawn('bash', ['-c', `${rabbit}\n${script}; echo "\${PIPESTATUS[*]}" >&3`], {
    env: {
      PATH: process.env['PATH'] ?? '',
      NODE_BIN: process.execPath,
      CLI_BIN: BIN,
      RABBIT_API_KEY: service.keys.readOnly,
      RABBIT_BASE_URL: service.baseUrl,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let status = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (status += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve({ status: status.trim().split(' ').map(Number), stderr }));
  });
}

/** The tools the recipe uses; a missing one fails the test (spawnSync reports ENOENT). */
function tool(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const run = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

describe('export --out - piped to age and rclone rcat', () => {
  it('round-trips to an archive that passes verify and unzip -t; the summary goes to stderr', async () => {
    const key = join(dir, 'key.txt');
    tool('age-keygen', ['-o', key]);
    const recipient = tool('age-keygen', ['-y', key]).trim();
    const remote = await tempDir();
    const work = join(dir, 'work');
    const rclone = { RCLONE_CONFIG: join(dir, 'no-rclone.conf'), RCLONE_CONFIG_LOCAL_TYPE: 'local' };
    const run = await pipeline(
      `rabbit-export export --out - --work-dir "${work}" --json | age -r ${recipient} | rclone rcat "local:${remote}/rabbit/team.zip.age"`,
      rclone,
    );
    expect(run.status).toEqual([0, 0, 0]);
    const summary = JSON.parse(run.stderr.trim().split('\n').pop() as string) as Record<string, unknown>;
    expect(summary).toMatchObject({ type: 'summary', ok: true, exitCode: 0, complete: true, out: '-' });
    expect(run.stderr).not.toContain(service.keys.readOnly);

    // Back from the remote, decrypted: the same bytes the summary names, and a sound archive.
    const back = join(dir, 'team.zip');
    tool('rclone', ['copyto', `local:${remote}/rabbit/team.zip.age`, `${back}.age`], {
      env: { ...process.env, ...rclone },
    });
    tool('age', ['-d', '-i', key, '-o', back, `${back}.age`]);
    expect(await sha256OfFile(back)).toBe(summary['sha256']);
    expect(tool('unzip', ['-t', back])).toMatch(/No errors detected/);
    expect((await runCli(['verify', back], { register: registerVerify })).code).toBe(0);
    // The work folder keeps nothing once the archive has gone out.
    expect(await readdir(work)).toEqual([]);
  });

  it('a reader that stops early is exit 1, and nothing is claimed complete', async () => {
    const work = join(dir, 'work');
    const run = await pipeline(
      `rabbit-export export --out - --work-dir "${work}" --json | head -c 100 > /dev/null`,
      {},
    );
    expect(run.status[0]).toBe(1);
    expect(run.stderr).toMatch(/broken pipe/);
    const summary = JSON.parse(
      run.stderr
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .pop() as string,
    );
    expect(summary).toMatchObject({ ok: false, exitCode: 1, error: { code: 'OUTPUT_UNWRITABLE' } });
    expect(run.stderr).not.toMatch(/"complete":true|^complete:/m);
    expect((await readdir(work)).filter((name) => name.endsWith('.zip'))).toEqual([]);
  });

  it('human messages go to stderr; stdout carries the zip alone', async () => {
    const work = join(dir, 'work');
    const out = join(dir, 'direct.zip');
    const run = await pipeline(`rabbit-export export --out - --work-dir "${work}" > "${out}"`, {});
    expect(run.status).toEqual([0]);
    expect(run.stderr).toMatch(/^complete: /m);
    expect(run.stderr).toMatch(/^archive: stdout$/m);
    expect(tool('unzip', ['-t', out])).toMatch(/No errors detected/);
    expect((await readFile(out)).subarray(0, 4).toString('hex')).toBe('504b0304');
  });

  it('refuses a terminal as stdout, with a hint, before any request', async () => {
    const err: string[] = [];
    const io = {
      stdout: { isTTY: true, write: () => true },
      stderr: { isTTY: false, write: (text: string) => err.push(text) > 0 },
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    } as unknown as CliIO;
    const program = new Command('rabbit-export').exitOverride();
    registerExport(program, io);
    const saved = process.exitCode;
    try {
      await program.parseAsync(['node', 'rabbit-export', 'export', '--out', '-']);
      expect(process.exitCode).toBe(2);
    } finally {
      process.exitCode = saved;
    }
    expect(err.join('')).toMatch(/stdout.*is a terminal here; pipe it on/);
    expect(service.stats.requests).toBe(0);
  });
});
