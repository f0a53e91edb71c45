import { constants } from 'node:fs';
import { link, lstat, open, rename, rm, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { RabbitError } from '../core/errors.js';
import { isProcessAlive } from '../core/process-alive.js';
import { formatDuration } from '../core/duration.js';
import { shellWords } from '../core/shell-quote.js';
import { tempPathFor } from '../core/output-file.js';
import { createPrivateFile, unsafePath, whyNotOwn } from '../core/private-files.js';

export interface Lock {
  release(): Promise<void>;
}

/**
 * An exclusive lock file holding the owner's pid, host and start. It is taken in one atomic step:
 * the owner's record is written whole to a file of our own, then hard-linked to the lock's name,
 * which fails if the name exists; so no one ever reads a half-written lock of a live run. A lock
 * that cannot be read (empty, cut short, not ours) counts as held. One whose process is gone
 * (crash, kill -9, reboot) is taken over, also atomically (see takeOver); a live owner makes the
 * caller fail with LOCKED. The lock is released only while it is still ours, by inode.
 *
 * `more` goes into the refusals' data: `flag`, when the lock's name follows from a path the user
 * chose with that option. What is found there then may be a file of the user's, so no refusal
 * says to remove it: the way on is another path for the option.
 */
export async function acquireLock(path: string, what: string, more: Record<string, unknown> = {}): Promise<Lock> {
  const mine = tempPathFor(path);
  const handle = await createPrivateFile(mine);
  let ino: number;
  try {
    await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
    await handle.sync();
    ino = (await handle.stat()).ino;
  } finally {
    await handle.close();
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(mine, path);
        return ownedLock(path, ino);
      } catch (error) {
        if ((error as { code?: string }).code !== 'EEXIST') throw error;
      }
      const found = await readLock(path, what, more);
      // Released between the link and the look: try again.
      if (found === undefined) continue;
      if (found.owner === undefined) throw unreadable(what, path, more);
      if (isAlive(found.owner)) throw heldBy(found.owner, what, path);
      if (await takeOver(path, mine, found.ino, what)) return ownedLock(path, ino);
    }
    throw new RabbitError('LOCKED', `${what} is being locked by other processes at this moment; lock file ${path}`);
  } finally {
    // After a link the lock's name holds the record; after a takeover the temp name is gone.
    await rm(mine, { force: true });
  }
}

/**
 * Throws LOCKED when `path` holds the record of a run that is alive; anything else there (nothing,
 * a file that holds no record, another user's, a run that is gone) is let be and left as it is.
 * For a lock's name of an earlier version, which a run of that version may still hold.
 */
export async function refuseLiveLock(path: string, what: string): Promise<void> {
  const found = await readLock(path, what).catch(() => undefined);
  if (found?.owner !== undefined && isAlive(found.owner)) throw heldBy(found.owner, what, path);
}

/**
 * Replaces the stale lock (inode `staleIno`) with ours, as one rename, under a guard that only one
 * process can hold (`path.takeover`, taken with a link as the lock is): under it the lock is
 * looked at again and replaced only if it is still the very file found stale. Two runs that both
 * found the lock stale cannot both take it, and a run that took it is never replaced by one that
 * found it stale a moment before. False when the lock changed: start again.
 */
async function takeOver(path: string, mine: string, staleIno: number, what: string): Promise<boolean> {
  const guard = `${path}.takeover`;
  try {
    await link(mine, guard);
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
    const holder = await readLock(guard, what);
    if (holder === undefined) return false;
    if (holder.owner !== undefined && isAlive(holder.owner)) throw heldBy(holder.owner, what, path);
    // A process died in the instant between taking the guard and dropping it: only a person can
    // tell that no one else is about to use it.
    throw new RabbitError(
      'LOCKED',
      `${what} is locked: a run that was taking over its stale lock stopped half-way, leaving ${guard}; if no other run is using it, remove both (${shellWords('rm', guard, path)}) and run again`,
      { data: { lockFile: path } },
    );
  }
  const ours = (await lstat(guard)).ino;
  try {
    const now = await lstat(path).catch(() => undefined);
    if (now?.ino !== staleIno) return false;
    await rename(mine, path);
    return true;
  } finally {
    const still = await lstat(guard).catch(() => undefined);
    if (still?.ino === ours) await unlink(guard).catch(() => undefined);
  }
}

function ownedLock(path: string, ino: number): Lock {
  return {
    async release() {
      // A lock taken over from us (we were thought dead) is someone else's now: leave it.
      const now = await lstat(path).catch(() => undefined);
      if (now?.ino === ino) await unlink(path).catch(() => undefined);
    },
  };
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

/**
 * The lock's inode and owner, undefined when it is gone; `owner` is undefined when the file holds
 * no owner (empty, half-written by another tool, garbage). Anything but a regular file of the
 * user's own is refused without being opened for reading: a FIFO would hang the read.
 */
async function readLock(
  path: string,
  what: string,
  more: Record<string, unknown> = {},
): Promise<{ ino: number; owner?: Owner } | undefined> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (stats === undefined) return undefined;
  const why = whyNotOwn(stats, 'file');
  if (why !== undefined) throw unsafePath(`the lock file of ${what}`, path, why, more);
  let text: string;
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const opened = await handle.stat();
      // Replaced between the look and the open: look again.
      if (opened.ino !== stats.ino || !opened.isFile()) return { ino: stats.ino };
      const buffer = Buffer.alloc(MAX_LOCK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, MAX_LOCK_BYTES, 0);
      text = buffer.toString('utf8', 0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const owner = JSON.parse(text) as Partial<Owner>;
    if (Number.isSafeInteger(owner.pid) && (owner.pid as number) > 0)
      return { ino: stats.ino, owner: { pid: owner.pid as number, host: owner.host ?? '', since: owner.since ?? '?' } };
  } catch {
    // Not an owner record: held, below.
  }
  return { ino: stats.ino };
}

const MAX_LOCK_BYTES = 4096;

function unreadable(what: string, path: string, more: Record<string, unknown>): RabbitError {
  // Beside a path the user chose, a file that holds no lock record is not one a run of ours left
  // (each writes its record whole before the name is linked to it): it may be the user's own.
  if (more['flag'] !== undefined) {
    return new RabbitError(
      'LOCKED',
      `${what} cannot be locked: ${path}, where its lock goes, holds no lock record (it is no lock of rabbit-export), so it was left as it is`,
      { data: { lockFile: path, ...more } },
    );
  }
  return new RabbitError(
    'LOCKED',
    `${what} is locked, but the lock file ${path} does not say by whom (it is empty or damaged), so it is treated as held; if no other run is using it, remove it (${shellWords('rm', path)}) and run again`,
    { data: { lockFile: path } },
  );
}

/** Who holds a lock, for people and for monitoring: a lock held for days means a stuck run. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holder took the lock (ISO 8601), or null if the lock file does not say. */
  since: string | null;
  /** Seconds since then, or null when unknown. */
  ageSeconds: number | null;
}

function heldBy(owner: Owner, what: string, path: string, now = Date.now()): RabbitError {
  const taken = Date.parse(owner.since);
  const ageSeconds = Number.isNaN(taken) ? null : Math.max(0, Math.floor((now - taken) / 1000));
  const holder: LockHolder = {
    pid: owner.pid,
    host: owner.host,
    since: Number.isNaN(taken) ? null : owner.since,
    ageSeconds,
  };
  const where = owner.host ? ` on ${owner.host}` : '';
  const age = ageSeconds === null ? '' : `, running for ${formatDuration(ageSeconds * 1000)}`;
  return new RabbitError(
    'LOCKED',
    `${what} is in use by process ${owner.pid}${where} (since ${owner.since}${age}); lock file ${path}`,
    {
      data: { holder },
    },
  );
}

function isAlive(owner: Owner): boolean {
  // A lock from another host cannot be checked from here; respect it.
  if (owner.host && owner.host !== hostname()) return true;
  return isProcessAlive(owner.pid);
}
