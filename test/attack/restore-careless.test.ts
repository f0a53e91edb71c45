import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, damage, exportPrototype, liveContents } from '../restore/restore-helpers.js';

let service: FakeService;
let dir: string;
let archive: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  archive = await exportPrototype(service, dir, 'night.zip');
  damage(service);
  service.stats.reset();
});

const restore = (...args: string[]) =>
  runCli(['restore', ...args], {
    register: registerRestore,
    env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
  });

describe('restore given careless flags', () => {
  it('refuses a negative, empty or made-up --outage-patience as a usage error, before any request', async () => {
    const before = liveContents(service);
    for (const patience of ['-5', '', '1e3', '-0', '5 minutes', 'Infinity']) {
      const run = await restore(archive, '--prototype', PROTO, '--prune', '--outage-patience', patience);
      expect({ patience, code: run.code }).toEqual({ patience, code: 2 });
      expect(run.stderr).toMatch(/--outage-patience takes a duration such as 90s/);
    }
    expect(service.stats.byMethod.size).toBe(0);
    expect(liveContents(service)).toEqual(before);
  });

  it('an id of the wrong shape, or one the archive does not hold, is refused with the next step, before any request', async () => {
    const cases: Array<{ args: string[]; says: RegExp; next: RegExp }> = [
      {
        args: ['--prototype', '../1'],
        // Read from the archive first: refused as an id it does not hold, naming those it does.
        says: /holds no prototype \.\.\/1; it holds prototype 1001/,
        next: /^next: run again with --prototype naming one of the ids it holds/m,
      },
      {
        args: ['--prototype', PROTO, '--page', 'layer1'],
        says: /"layer1" is not a page id/,
        next: /^next: .*page0001/m,
      },
      {
        args: ['--prototype', PROTO, '--layer', 'Footer'],
        says: /"Footer" is not a layer id/,
        next: /^next: .*layer1/m,
      },
      {
        args: ['--prototype', PROTO, '--page', 'page4242'],
        says: /the archive has no page page4242 in prototype 1001 \(revision 1\); it holds pages page0001, /,
        next: /^next: run again with --page naming one of the pages it holds/m,
      },
    ];
    for (const { args, says, next } of cases) {
      const run = await restore(archive, ...args, '--dry-run');
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(says);
      expect(run.stderr).toMatch(next);
    }
    expect(service.stats.requests).toBe(0);
  });

  it('takes --outage-patience 0 as "do not wait", and plans as usual', async () => {
    const run = await restore(
      archive,
      '--prototype',
      PROTO,
      '--prune',
      '--outage-patience',
      '0',
      '--dry-run',
      '--json',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ dryRun: true, create: 4, update: 2, delete: 1 });
    expect(service.stats.byMethod.get('POST') ?? 0).toBe(0);
  });

  it('says what is wrong with a folder, a text file or a cut-short archive, and writes nothing', async () => {
    const folder = join(dir, 'folder.zip');
    await mkdir(folder);
    const text = join(dir, 'notes.zip');
    await writeFile(text, 'not a zip\n');
    const cut = join(dir, 'cut.zip');
    const whole = await readFile(archive);
    await writeFile(cut, whole.subarray(0, whole.length - 100));
    const expected: Array<[string, RegExp]> = [
      [folder, /is a folder, not a zip archive/],
      [text, /is not a zip archive/],
      [cut, /cut short/],
    ];
    for (const [file, message] of expected) {
      const run = await restore(file, '--prototype', PROTO, '--prune');
      expect({ file, code: run.code }).toEqual({ file, code: 1 });
      expect(run.stderr).toMatch(message);
    }
    for (const method of ['POST', 'PUT', 'DELETE']) expect(service.stats.byMethod.get(method) ?? 0).toBe(0);
  });
});
