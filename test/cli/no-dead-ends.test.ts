import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerDemo } from '../../src/cli/commands/demo.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// issue 45: what a user meets in the second hour leads somewhere. A --prototype the account or
// the archive does not hold is refused before any work, naming the ones it holds, and the next
// step printed works; network failures say what happened and what to do in every command.

let service: FakeService;
let archive: string;
let keep: string;

const env = (key = service.keys.readOnly): NodeJS.ProcessEnv => ({
  RABBIT_API_KEY: key,
  RABBIT_BASE_URL: service.baseUrl,
});

/**
 * The runs here go in-process, through the command's own registration and runAction (`--help`
 * through the whole command line, whose width it takes): what they print, their exit codes and
 * what they leave are judged, not the process.
 */
const REGISTER = { export: registerExport, restore: registerRestore, verify: registerVerify };
const exportCommand = { register: registerExport };
const demoCommand = { register: registerDemo };

const HELD = 'it holds prototypes 3, 17, 42, 1001 and 1002';
const NEXT = 'next: run again with --prototype naming one of the ids it holds, or without --prototype for all of them';

/** A port nothing listens on: one the system gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  // Not tempDir(): that one is emptied after each test, and every test reads this archive.
  keep = await mkdtemp(join(tmpdir(), 'rabbit-dead-ends-'));
  archive = join(keep, 'team.zip');
  await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
}, 60_000);

afterAll(async () => {
  await service.close();
  await rm(keep, { recursive: true, force: true });
});

describe('--prototype naming what is not there', () => {
  it('export: exit 2 before any prototype is fetched, nothing written, and the next step works', async () => {
    const dir = await tempDir();
    service.stats.reset();
    const run = await runCli(['export', '--out', 'one.zip', '--prototype', '999'], {
      ...exportCommand,
      env: env(),
      cwd: dir,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`rabbit-export: the account holds no prototype 999; ${HELD}\n${NEXT}\n`);
    expect(await readdir(dir)).toEqual([]);
    expect(service.stats.requests).toBe(1);
    // The next step as printed: one of the ids it holds.
    const again = await runCli(['export', '--out', 'one.zip', '--prototype', '42'], {
      ...exportCommand,
      env: env(),
      cwd: dir,
    });
    expect(again.code).toBe(0);
    expect(existsSync(join(dir, 'one.zip'))).toBe(true);
  });

  it('backup: exit 2, no archive in --dir', async () => {
    const dir = join(await tempDir(), 'nightly');
    const run = await runCli(['backup', '--dir', dir, '--prototype', '3', '--prototype', '999', '--json'], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      type: 'summary',
      ok: false,
      exitCode: 2,
      error: { code: 'NO_SUCH_PROTOTYPE', missing: ['999'] },
    });
    expect(existsSync(dir) ? (await readdir(dir)).filter((name) => name.endsWith('.zip')) : []).toEqual([]);
  });

  it('search: exit 2, not "0 hits"', async () => {
    const run = await runCli(['search', archive, 'page', '--prototype', '999'], { register: registerSearch });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`rabbit-export: the archive holds no prototype 999; ${HELD}\n${NEXT}\n`);
  });

  it('convert and restore: the same words', async () => {
    const out = join(await tempDir(), 'svg');
    const converted = await runCli(['convert', archive, '--to', 'svg', '--out', out, '--prototype', '999'], {
      register: registerConvert,
    });
    expect(converted.code).toBe(2);
    expect(converted.stderr).toContain(`the archive holds no prototype 999; ${HELD}\n${NEXT}\n`);
    const restored = await runCli(['restore', archive, '--prototype', '999'], {
      register: registerRestore,
      env: env(service.keys.readWrite),
    });
    expect(restored.code).toBe(2);
    // Restore needs --prototype: the step cannot be to leave it out.
    expect(restored.stderr).toContain(
      `team.zip holds no prototype 999; ${HELD}\nnext: run again with --prototype naming one of the ids it holds\n`,
    );
  });

  it('restore: an id that is no id at all is refused the same way, naming the ones held, before the service is asked', async () => {
    for (const id of ['abc', '-1', '1,1']) {
      service.stats.reset();
      const restored = await runCli(['restore', archive, `--prototype=${id}`], {
        register: registerRestore,
        env: env(service.keys.readWrite),
      });
      expect(restored.code, id).toBe(2);
      expect(restored.stderr, id).toContain(
        `team.zip holds no prototype ${id}; ${HELD}\nnext: run again with --prototype naming one of the ids it holds\n`,
      );
      expect(service.stats.requests, id).toBe(0);
    }
  });
});

describe('the service out of reach', () => {
  it('verify --against-live and restore say what export says: the connection was refused, and where to look', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const keyed = { RABBIT_API_KEY: service.keys.readWrite };
    // One attempt each: the words after the last attempt are the point, not the backoffs before it.
    for (const args of [
      ['verify', archive, '--against-live', '--base-url', base, '--retries', '1'],
      ['restore', archive, '--prototype', '3', '--base-url', base, '--retries', '1'],
      ['export', '--out', join(await tempDir(), 'x.zip'), '--base-url', base, '--retries', '1'],
    ]) {
      const run = await runCli(args, { register: REGISTER[args[0] as keyof typeof REGISTER], env: keyed });
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr, args[0]).toMatch(/rabbit-export: the connection was refused \(GET [^)]*\)\n/);
      expect(run.stderr, args[0]).toContain(
        'next: nothing listens at that host and port: check the port in --base-url (or RABBIT_BASE_URL), and that the service is up\n',
      );
      expect(run.stderr, args[0]).not.toMatch(/ECONNREFUSED/);
    }
  });

  it('a proxy that refuses is named as the proxy by every command, not blamed on --base-url', async () => {
    const proxy = `127.0.0.1:${await closedPort()}`;
    const keyed = { RABBIT_API_KEY: service.keys.readWrite, HTTP_PROXY: `http://${proxy}`, NO_PROXY: '' };
    for (const args of [
      ['verify', archive, '--against-live', '--base-url', service.baseUrl, '--retries', '1'],
      ['restore', archive, '--prototype', '3', '--base-url', service.baseUrl, '--retries', '1'],
      ['export', '--out', join(await tempDir(), 'x.zip'), '--base-url', service.baseUrl, '--retries', '1'],
    ]) {
      const run = await runCli([...args, '--json'], {
        register: REGISTER[args[0] as keyof typeof REGISTER],
        env: keyed,
      });
      expect(run.code, args[0]).toBe(1);
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { error: { code: string } };
      expect(summary.error.code, args[0]).toBe('PROXY_REFUSED');
      expect(run.stderr, args[0]).toContain(`rabbit-export: the proxy ${proxy} refused the connection`);
      expect(run.stderr, args[0]).toContain('next: nothing listens at the proxy');
      expect(run.stderr, args[0]).not.toContain('check the port in --base-url');
    }
  });
});

describe('help, demo and --out say what is so', () => {
  it('verify --help: with --against-live the base URL is the archive’s own unless given', async () => {
    const run = await runCli(['verify', '--help'], { register: 'all', env: { COLUMNS: '200' } });
    expect(run.stdout).toContain('default the one the archive was exported from)');
    expect(run.stdout).not.toContain('pidoco.com');
    // The run limits say what verify does when they are reached: it writes nothing and resumes nothing.
    expect(run.stdout).not.toContain('write what was fetched');
    expect(run.stdout).not.toContain('run again to resume');
    expect(run.stdout).toMatch(/--outage-patience <duration> +with --against-live: [^\n]*\(exit 1\b/);
    // The claim holds: the archive's service is checked without --base-url.
    const checked = await runCli(['verify', archive, '--against-live'], {
      register: registerVerify,
      env: { RABBIT_API_KEY: service.keys.readOnly },
    });
    expect(checked.code).toBe(0);
  });

  it('a second demo replaces the archive of the first', async () => {
    const dir = await tempDir();
    expect((await runCli(['demo'], { ...demoCommand, cwd: dir })).code).toBe(0);
    const second = await runCli(['demo'], { ...demoCommand, cwd: dir });
    expect(second.stderr).not.toContain('rabbit-export:');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('replacing rabbit-demo.zip, the archive of an earlier demo\n');
    // Anything else is still not replaced without --force.
    await writeFile(join(dir, 'notes.zip'), 'my notes');
    const mine = await runCli(['demo', '--out', 'notes.zip'], { ...demoCommand, cwd: dir });
    expect(mine.code).toBe(2);
    expect(await readFile(join(dir, 'notes.zip'), 'utf8')).toBe('my notes');
  }, 120_000);

  it("demo never replaces a real account's archive, even one exported through a tunnel on loopback", async () => {
    const dir = await tempDir();
    // An account reached at 127.0.0.1 (ssh -L, a local proxy): its own prototypes, not the sample's.
    const tunnel = await startFakeService({ seed: 1 });
    try {
      tunnel.store.renamePrototype(3, 'Checkout flow');
      await exportAccount({
        out: join(dir, 'team.zip'),
        baseUrl: tunnel.baseUrl,
        keys: [tunnel.keys.readOnly],
      });
    } finally {
      await tunnel.close();
    }
    const before = await readFile(join(dir, 'team.zip'));
    const run = await runCli(['demo', '--out', 'team.zip'], { ...demoCommand, cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('already exists, and is not replaced without --force');
    expect((await readFile(join(dir, 'team.zip'))).equals(before)).toBe(true);
  }, 120_000);

  it('--out without .zip: says it wrote a zip under that name', async () => {
    const dir = await tempDir();
    const run = await runCli(['export', '--out', 'team', '--prototype', '42'], {
      ...exportCommand,
      env: env(),
      cwd: dir,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `note: wrote a zip archive named ${join(dir, 'team')}, as --out said; its name has no .zip, which a file manager needs to open it\n`,
    );
    expect((await readFile(join(dir, 'team'))).subarray(0, 2).toString()).toBe('PK');
  });
});
