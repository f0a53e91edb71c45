import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { heldPrototypes } from '../../src/api/held-prototypes.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, damage, exportPrototype } from '../restore/restore-helpers.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

describe('restore says what to do next', () => {
  it('--prototype the archive lacks: names the ones it holds', async () => {
    const archive = join(dir, 'all.zip');
    await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 4 });
    const run = await runCli(['restore', archive, '--prototype', '999', '--json'], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'NO_SUCH_PROTOTYPE' } });
    const ids = service.store.prototypeIds().map(String);
    expect(ids.length).toBeGreaterThan(1);
    expect(run.stderr).toContain(
      `all.zip holds no prototype 999; it holds prototypes ${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`,
    );
  });

  it.each([
    [[], 'it holds no prototype'],
    [['42'], 'it holds prototype 42'],
    [['17', '3', '42'], 'it holds prototypes 3, 17 and 42'],
    [
      ['9', '8', '7', '6', '5', '4', '3', '2', '1', '10'],
      // Which command lists the rest depends on the holder: the next step says it (cli/error-guide.ts).
      'it holds prototypes 1, 2, 3, 4, 5 and 5 more',
    ],
  ])('the prototypes held, %j: a few, then how many more', (ids, text) => {
    expect(heldPrototypes(ids)).toBe(text);
  });

  it('a read-only key: the next step is a read-write key, not "the key is wrong"', async () => {
    const archive = await exportPrototype(service, dir, 'one.zip');
    damage(service);
    const run = await runCli(['restore', archive, '--prototype', PROTO, '--json'], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(1);
    const record = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { error: { code: string } };
    expect(record.error.code).toBe('KEY_REFUSED');
    const next = run.stderr.split('\n').find((line) => line.startsWith('next: '));
    expect(next).toMatch(/^next: use a read-write key/);
    expect(run.stderr).not.toMatch(/wrong, revoked/);
    expect(run.stdout + run.stderr).not.toContain(service.keys.readOnly);
  });
});
