import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { damagedArchiveFixture } from '../restore/restore-helpers.js';

/**
 * The journal's lock was FILE.lock until today and is FILE.rabbit-lock now. A restore of the
 * version before, running on the same journal (an older install in a cron job, a colleague's
 * copy), holds FILE.lock, which this version never looks at: both restores append to one journal
 * and send their writes to one prototype at once, which the lock exists to prevent. A live lock
 * record at the old name, of the shape the older version writes (pid, host, since), is that run.
 */
const fixture = damagedArchiveFixture();
let older: ChildProcess | undefined;

afterEach(() => {
  older?.kill();
  older = undefined;
});

describe('a restore of the version before, running on the same journal, keeps this one off it', () => {
  it('its live lock at FILE.lock stops the restore with LOCKED, before anything is sent', async () => {
    // A live process of this host stands for the older restore.
    older = spawn('sleep', ['60'], { stdio: 'ignore' });
    const record = { pid: older.pid, host: hostname(), since: new Date().toISOString() };
    await writeFile(join(fixture.dir, 'journal.jsonl.lock'), JSON.stringify(record));
    const run = await fixture.restore(['--journal', 'journal.jsonl'], { json: true, cwd: fixture.dir });
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { error?: { code: string } };
    expect({ code: run.code, error: summary.error?.code, writes: fixture.service.stats.requests }).toEqual({
      code: 1,
      error: 'LOCKED',
      writes: 0,
    });
  });
});
