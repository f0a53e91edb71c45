import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, chown, lstat, open, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { acquireLock } from '../../src/storage/lock.js';
import { tempDir } from '../helpers/temp.js';

/** A pid no process has: that of one that has exited. */
function deadPid(): number {
  return Number(execFileSync('sh', ['-c', 'sh -c "echo \\$\\$"'], { encoding: 'utf8' }).trim());
}

const NOBODY = 65534;

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

describe('the lock on a machine shared with other users', () => {
  it('goes to exactly one of many runs taking it at once, free or stale', async () => {
    const dir = await tempDir();
    for (const stale of [false, true]) {
      const path = join(dir, stale ? 'stale.lock' : 'free.lock');
      if (stale)
        await writeFile(path, JSON.stringify({ pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00Z' }));
      // Started one turn of the event loop apart, so that takers meet at every step of one another's.
      const takers: Promise<unknown>[] = [];
      for (let i = 0; i < 24; i++) {
        const taker = acquireLock(path, 'the output');
        // Handled at once: a loser refused before allSettled looks is no unhandled rejection.
        taker.catch(() => undefined);
        takers.push(taker);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const outcomes = await Promise.allSettled(takers);
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(won).toHaveLength(1);
      const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
      expect(refusals).toHaveLength(23);
      expect(refusals.every((reason) => isRabbitError(reason, 'LOCKED'))).toBe(true);
      const owner = JSON.parse(await readFile(path, 'utf8')) as { pid: number };
      expect(owner.pid).toBe(process.pid);
    }
  });

  it('counts an empty or half-written lock as held, and says how to remove it', async () => {
    const dir = await tempDir();
    for (const [name, text] of [
      ['empty', ''],
      ['half', '{"pid":12'],
    ] as const) {
      const path = join(dir, name);
      await writeFile(path, text, { mode: 0o600 });
      const error = await acquireLock(path, 'the output').catch((caught: unknown) => caught);
      expect(isRabbitError(error, 'LOCKED')).toBe(true);
      expect((error as Error).message).toContain(`rm ${path}`);
      expect(await readFile(path, 'utf8')).toBe(text);
    }
  });

  it('leaves a stale lock alone while a takeover of it is half-done, and says what to remove', async () => {
    const dir = await tempDir();
    const path = join(dir, 'lock');
    const stale = JSON.stringify({ pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00Z' });
    await writeFile(path, stale);
    await writeFile(`${path}.takeover`, stale);
    const error = await acquireLock(path, 'the output').catch((caught: unknown) => caught);
    expect(isRabbitError(error, 'LOCKED')).toBe(true);
    expect((error as Error).message).toContain(`rm ${path}.takeover ${path}`);
    expect(await readFile(path, 'utf8')).toBe(stale);
  });

  it('is not removed by its old owner once another run has taken it over', async () => {
    const dir = await tempDir();
    const path = join(dir, 'lock');
    const first = await acquireLock(path, 'the output');
    // The first run was thought dead and its lock replaced (as a takeover does, by rename).
    const other = join(dir, 'other');
    await writeFile(other, JSON.stringify({ pid: 1, host: 'elsewhere', since: '2020-01-01T00:00:00Z' }));
    await rename(other, path);
    await first.release();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: 1, host: 'elsewhere' });
    // Its own lock it does remove.
    const again = join(dir, 'again');
    const lock = await acquireLock(again, 'the output');
    await lock.release();
    await expect(lstat(again)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a lock that is a symlink to a FIFO at once, without hanging on it', async () => {
    const dir = await tempDir();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const path = join(dir, 'lock');
    await symlink(fifo, path);
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), 10_000)));
    const outcome = await Promise.race([acquireLock(path, 'the output').catch((caught: unknown) => caught), hung]);
    clearTimeout(timer);
    if (outcome === 'hung') {
      // Free the thread stuck reading the FIFO before failing, so the worker can end.
      const writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
      await writer?.close();
    }
    expect(outcome).not.toBe('hung');
    expect(isRabbitError(outcome, 'UNSAFE_PATH')).toBe(true);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
  });

  it('refuses a lock that belongs to another user or that others may write, and leaves it', async () => {
    const dir = await tempDir();
    const foreign = join(dir, 'foreign');
    await writeFile(foreign, '', { mode: 0o600 });
    await chown(foreign, NOBODY, NOBODY);
    const writable = join(dir, 'open');
    await writeFile(writable, JSON.stringify({ pid: deadPid(), host: '', since: '?' }));
    await chmod(writable, 0o666);
    for (const path of [foreign, writable]) {
      const error = await acquireLock(path, 'the output').catch((caught: unknown) => caught);
      expect(isRabbitError(error, 'UNSAFE_PATH')).toBe(true);
    }
    expect((await lstat(foreign)).uid).toBe(NOBODY);
    expect((await lstat(writable)).mode & 0o777).toBe(0o666);
  });
});
