import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerDemo } from '../../src/cli/commands/demo.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { registerView } from '../../src/cli/commands/view.js';
import type { CliIO } from '../../src/cli/run.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { until } from '../helpers/until.js';
import { dataOffsetOf, flipByte } from '../zip/zip-bytes.js';

/**
 * A file name is text someone else may have chosen (a folder of archives handed over, a glob that
 * picked it up): one holding ESC and BEL would retitle the window and clear the screen when
 * printed. Every command prints file and folder names as printable() shows them.
 */
const NAME = 'team\u001b]0;owned\u0007\u001b[2J';
const SHOWN = 'team<U+001B>]0;owned<U+0007><U+001B>[2J';
/** What a terminal acts on: C0 but the line break, DEL and C1. */
const CONTROL = /(?!\n)\p{Cc}/u;

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

function expectShown(text: string): void {
  expect(text).toContain(SHOWN);
  expect(text).not.toMatch(CONTROL);
}

async function exported(out: string): Promise<string> {
  const run = await runCli(['export', '--out', out], {
    register: registerExport,
    env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
  });
  expect(run.code).toBe(0);
  if (out.includes(NAME)) expectShown(run.stdout + run.stderr);
  return out;
}

describe('a file name holding terminal controls is printed escaped', () => {
  it('by export', async () => {
    await exported(join(dir, `${NAME}.zip`));
  });

  it('by verify, beside the sidecar it matches or cannot read', async () => {
    const zip = join(dir, `${NAME}.zip`);
    const plain = await exported(join(dir, 'team.zip'));
    await copyFile(plain, zip);
    await copyFile(`${plain}.sha256`, `${zip}.sha256`);
    const matched = await runCli(['verify', zip], { register: registerVerify });
    expect(matched.code).toBe(0);
    expect(matched.stdout).toContain(`matches ${join(dir, SHOWN)}.zip.sha256`);
    expectShown(matched.stdout + matched.stderr);

    await writeFile(`${zip}.sha256`, 'not a sum line\n');
    const malformed = await runCli(['verify', zip], { register: registerVerify });
    expect(malformed.stdout).toContain(`note: ${join(dir, SHOWN)}.zip.sha256 is not a sha256sum line`);
    expectShown(malformed.stdout + malformed.stderr);
  });

  it('by export in its note on a zip named without .zip', async () => {
    const run = await runCli(['export', '--out', join(dir, NAME)], {
      register: registerExport,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`note: wrote a zip archive named ${join(dir, SHOWN)}, as --out said`);
    expectShown(run.stdout + run.stderr);
  });

  it('by view, in the address line and in a refusal of a damaged entry', async () => {
    const zip = join(dir, `${NAME}.zip`);
    await copyFile(await exported(join(dir, 'team.zip')), zip);
    await flipByte(zip, (await dataOffsetOf(zip, 'prototypes.json')) + 1);
    const out: string[] = [];
    const err: string[] = [];
    const sink = (lines: string[]) => ({ write: (chunk: unknown) => lines.push(String(chunk)) > 0 });
    const io = { stdout: sink(out), stderr: sink(err), env: {} } as unknown as CliIO;
    const program = new Command('rabbit-export').exitOverride();
    registerView(program, io);
    // view runs until SIGINT or SIGTERM: heard here from the listeners it adds, not from the system.
    const before = process.listeners('SIGTERM');
    const running = program.parseAsync(['node', 'rabbit-export', 'view', zip, '--port', '0']);
    try {
      const url = await until(() => /at (http:\/\/\S+)/.exec(out.join(''))?.[1], { what: 'the address' });
      expect((await fetch(`${url}prototypes.json`)).ok).toBe(false);
      await until(() => err.join('').includes('refused'), { what: 'the refusal' });
    } finally {
      for (const stop of process.listeners('SIGTERM').filter((listener) => !before.includes(listener)))
        process.emit('SIGTERM', stop as never);
      await running;
    }
    expect(out.join('')).toContain(`serving ${join(dir, SHOWN)}.zip at `);
    expectShown(out.join(''));
    expect(err.join('')).toContain(`run rabbit-export verify '${join(dir, SHOWN)}.zip' to list what is damaged`);
    expectShown(err.join(''));
  });

  it('by backup, after a night and in its --dry-run plan', async () => {
    const folder = join(dir, NAME);
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    const night = await runCli(['backup', '--dir', folder], { register: registerBackup, env });
    expect(night.code).toBe(0);
    expect(night.stdout).toContain(`complete: ${join(dir, SHOWN)}/`);
    expectShown(night.stdout + night.stderr);
    const plan = await runCli(['backup', '--dir', folder, '--dry-run'], { register: registerBackup });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(`what a backup into ${join(dir, SHOWN)} would keep`);
    expectShown(plan.stdout + plan.stderr);
  });

  it('by demo, the archive it writes and the one it replaces', async () => {
    const options = { register: registerDemo, cwd: dir };
    expect((await runCli(['demo', '--out', `${NAME}.zip`], options)).code).toBe(0);
    const again = await runCli(['demo', '--out', `${NAME}.zip`], options);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`replacing ${SHOWN}.zip, the archive of an earlier demo`);
    expect(again.stdout).toContain(`archive: ${join(dir, SHOWN)}.zip`);
    expectShown(again.stdout + again.stderr);
  }, 120_000);
});
