import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A careless command line that carries the API key where a usage error quotes it. The key is in
 * RABBIT_API_KEY too, so the CLI knows it is the key. The unknown-option redaction cuts a long
 * option at its `=` only; commander's invalid-argument, unknown-command and the key-file errors
 * quote the word as typed, on stderr and in the --json record.
 */
const KEY = 'a433392de0a0985acb915542693820b45b4c5077';
const env = { RABBIT_API_KEY: KEY, RABBIT_BASE_URL: 'http://127.0.0.1:9' };

describe('a mistyped or misplaced option does not echo the API key', () => {
  it.each([
    ['colon instead of =', ['export', `--api-key:${KEY}`, '--out', 'x.zip', '--json']],
    ['flag and key in one word (a quoted shell variable)', ['export', `--api-key ${KEY}`, '--out', 'x.zip']],
    ['the key typed as an option name', ['export', `--${KEY}`, '--out', 'x.zip']],
    ['the key given to --api-key-file', ['export', '--api-key-file', KEY, '--out', 'x.zip', '--json']],
    ['the key given to a number option', ['export', '--concurrency', KEY, '--out', 'x.zip', '--json']],
    ['the key given to --prototype', ['export', '--prototype', KEY, '--out', 'x.zip', '--json']],
    ['the key given to a choice option', ['convert', 'a.zip', '--to', KEY]],
    ['the key as the command', [KEY]],
    ['the key as the completion shell', ['completion', KEY]],
    ['the key given to --max-size', ['export', '--max-size', KEY, '--out', 'x.zip', '--json']],
    [
      'the key given to --base-url (its next step repeats it)',
      ['export', '--base-url', KEY, '--out', 'x.zip', '--json'],
    ],
    ['the key given to --api-key-file, on stderr', ['export', '--api-key-file', KEY, '--out', 'x.zip']],
  ])('%s', async (_name, args) => {
    const run = await runCli(args, { register: 'all', env });
    expect(run.code).toBe(2);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });
});

describe("a key the process read from --api-key-file is hidden as the environment's is", () => {
  it.each([
    ['--base-url', ['--base-url', KEY]],
    ['--prototype', ['--prototype', KEY]],
  ])('%s KEY, the key in the file alone', async (_name, flags) => {
    const dir = await tempDir();
    const file = join(dir, 'key.txt');
    await writeFile(file, `${KEY}\n`, { mode: 0o600 });
    const run = await runCli(['export', '--api-key-file', file, ...flags, '--out', join(dir, 'x.zip'), '--json'], {
      register: 'all',
      env: { RABBIT_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });
});

describe('restore --prototype KEY', () => {
  let service: FakeService;
  let dir: string;
  useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

  it('says the archive holds no such prototype without naming the key', async () => {
    const archive = join(dir, 'all.zip');
    await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 4 });
    for (const json of [[], ['--json']]) {
      const run = await runCli(['restore', archive, '--prototype', KEY, ...json], {
        register: 'all',
        env: { RABBIT_API_KEY: KEY, RABBIT_BASE_URL: service.baseUrl },
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('holds no prototype');
      expect(run.stdout + run.stderr).not.toContain(KEY);
    }
  });
});

describe('the redaction keeps the message true', () => {
  it.each([
    [['restore', 'a.zip', '--prototype', '3'], '--dry-run=true'],
    [['export', '--out', 'x.zip'], '--force=yes'],
    [['export', '--out', 'x.zip'], '--json=1'],
  ])('%j %s names a flag that exists: it is not called unknown', async (args, flag) => {
    const run = await runCli([...args, flag], { register: 'all', env });
    expect(run.code).toBe(2);
    const name = flag.slice(0, flag.indexOf('='));
    expect(run.stderr).not.toContain(`unknown option '${name}'`);
    expect(run.stderr).toContain(`option '${name}' takes no value`);
  });

  it('a value joined to a value option by another character is said so, the value left out', async () => {
    const run = await runCli(['export', '--out', 'x.zip', '--concurrency:SECRET'], { register: 'all', env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("option '--concurrency' takes its value after '=' or as the next word");
    expect(run.stderr).not.toContain('SECRET');
  });

  it('a flag of another command is still unknown to this one', async () => {
    // export has no --dry-run (restore and backup have): "unknown" is true here.
    const run = await runCli(['export', '--out', 'x.zip', '--dry-run=true'], { register: 'all', env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--dry-run'");
  });
});
