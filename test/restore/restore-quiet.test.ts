import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import type { OutageKind } from '../../src/fake-service/index.js';
import { restorePrototype } from '../../src/restore/restore-prototype.js';
import { runCli } from '../helpers/cli.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';
import { PROTO, damage, exportPrototype, restoreOptions, servicesClosedAfterEach } from './restore-helpers.js';

// `restore --quiet` is export's --quiet on stderr: nothing there but errors. The pauses for the
// service, the waits of a request to be sent again and the news of a journal moved aside are the
// run's progress, which an export under --quiet does not print either (its outage lines and its
// notice of saved progress set aside). The plan and each write still go to stdout.

const serve = servicesClosedAfterEach();

/** The journal of a restore of another service, where this restore's journal goes by default. */
const OTHER_JOURNAL = '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n';

/**
 * A restore through the CLI of a service that, from its first write on, answers `kind` to
 * everything for five minutes of the run's clock, with another restore's journal where this
 * one's goes.
 */
async function restoreThrough(kind: OutageKind, flags: string[]) {
  const dir = await tempDir();
  const archive = await exportPrototype(await serve(), dir, 'night.zip');
  const twin = await serve();
  damage(twin);
  await restorePrototype(restoreOptions(twin, archive, { dryRun: true }));
  // Restore sends one request at a time: its five minutes of waits take a few milliseconds.
  const clock = skippingClock(10_000);
  const service = await serve({
    now: clock.now,
    outage: { atRequest: twin.stats.requests + 1, forMs: 5 * 60_000, kind },
  });
  damage(service);
  await writeFile(join(dir, `.night.zip.restore-${PROTO}.jsonl`), OTHER_JOURNAL);
  return runCli(['restore', archive, '--prototype', PROTO, ...flags], {
    register: registerRestore,
    env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    clock,
  });
}

describe('restore --quiet prints nothing on stderr but errors, as export --quiet does', () => {
  it.each([
    ['429', '-q'],
    ['503', '--quiet'],
  ] as const)(
    'a service answering %s for minutes: waits, pauses and the journal moved aside are told without %s, and not with it',
    async (kind, quiet) => {
      const told = await restoreThrough(kind, []);
      expect(told.code).toBe(0);
      // What --quiet leaves out is there without it: the scenario makes each kind of line.
      expect(told.stderr).toMatch(new RegExp(`^POST \\S+ answered ${kind}: trying again in`, 'm'));
      expect(told.stderr).toMatch(/^service back after /m);
      expect(told.stderr).toContain('a journal of another restore was moved to ');

      const run = await restoreThrough(kind, [quiet]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      // The plan and each write are printed all the same.
      expect(run.stdout).toMatch(/created element\d+ on page0001/);
    },
    30_000,
  );

  it('an error is still told under -q, with its next step', async () => {
    const dir = await tempDir();
    const archive = await exportPrototype(await serve(), dir, 'night.zip');
    const notes = join(dir, 'notes.txt');
    await writeFile(notes, 'my notes\n');
    const run = await runCli(['restore', archive, '--prototype', PROTO, '--journal', notes, '-q'], {
      register: registerRestore,
      env: { RABBIT_API_KEY: 'unused', RABBIT_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${notes} is not a restore journal`);
    expect(run.stderr).toMatch(/^next: /m);
  });
});
