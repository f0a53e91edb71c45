import { readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, damage, exportPrototype } from './restore-helpers.js';

let service: FakeService;
let dir: string;
let archive: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  archive = await exportPrototype(service, dir, 'a.zip');
});

const journals = async (): Promise<string[]> =>
  (await readdir(dirname(archive))).filter((name) => name.includes('.restore-'));

describe('restore leaves nothing behind when it is done, and offers only a rerun that can help', () => {
  it('removes its journal beside the archive after a successful run', async () => {
    damage(service);
    const run = await runCli(['restore', archive, '--prototype', PROTO], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(0);
    expect(await journals()).toEqual([]);
    expect(run.stdout).not.toContain('journal:');
  });

  it('after a read-only key is refused, says that a read-write key is needed to resume, not a plain rerun', async () => {
    damage(service);
    const run = await runCli(['restore', archive, '--prototype', PROTO], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('running the same command again');
    expect(run.stdout).toContain('with a read-write key, running the command again resumes');
    expect(run.stderr).toMatch(/read-only/);
  });
});
