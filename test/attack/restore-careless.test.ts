import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { PROTO, damagedArchiveFixture, liveContents } from '../restore/restore-helpers.js';

const fixture = damagedArchiveFixture({ name: 'night.zip' });

const restore = (...args: string[]) =>
  runCli(['restore', ...args], {
    register: registerRestore,
    env: { RABBIT_API_KEY: fixture.service.keys.readWrite, RABBIT_BASE_URL: fixture.service.baseUrl },
  });

describe('restore given careless flags', () => {
  it('refuses a negative, empty or made-up --outage-patience as a usage error, before any request', async () => {
    const before = liveContents(fixture.service);
    for (const patience of ['-5', '', '1e3', '-0', '5 minutes', 'Infinity']) {
      const run = await restore(fixture.archive, '--prototype', PROTO, '--prune', '--outage-patience', patience);
      expect({ patience, code: run.code }).toEqual({ patience, code: 2 });
      expect(run.stderr).toMatch(/--outage-patience takes a duration such as 90s/);
    }
    expect(fixture.service.stats.byMethod.size).toBe(0);
    expect(liveContents(fixture.service)).toEqual(before);
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
      const run = await restore(fixture.archive, ...args, '--dry-run');
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(says);
      expect(run.stderr).toMatch(next);
    }
    expect(fixture.service.stats.requests).toBe(0);
  });

  it('takes --outage-patience 0 as "do not wait", and plans as usual', async () => {
    const run = await restore(
      fixture.archive,
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
    expect(fixture.service.stats.byMethod.get('POST') ?? 0).toBe(0);
  });

  it('says what is wrong with a folder, a text file or a cut-short archive, and writes nothing', async () => {
    const folder = join(fixture.dir, 'folder.zip');
    await mkdir(folder);
    const text = join(fixture.dir, 'notes.zip');
    await writeFile(text, 'not a zip\n');
    const cut = join(fixture.dir, 'cut.zip');
    const whole = await readFile(fixture.archive);
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
    for (const method of ['POST', 'PUT', 'DELETE']) expect(fixture.service.stats.byMethod.get(method) ?? 0).toBe(0);
  });
});
