import { open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { RabbitError } from '../core/errors.js';
import { isProcessAlive } from '../core/process-alive.js';
import { formatDuration } from '../core/duration.js';

export interface Lock {
  release(): Promise<void>;
}

/**
 * An exclusive lock file holding the owner's pid and host. A lock whose process is gone (crash,
 * kill -9, reboot) is stale and taken over; a live owner makes the caller fail with LOCKED.
 */
export async function acquireLock(path: string, what: string): Promise<Lock> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      await handle.sync();
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const owner = await readOwner(path);
      if (owner && isAlive(owner)) throw heldBy(owner, what, path);
      // The owner is gone: the lock is stale. Remove it and try once more.
      await rm(path, { force: true });
    }
  }
  throw new RabbitError('LOCKED', `${what} is locked by another process; lock file ${path}`);
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

async function readOwner(path: string): Promise<Owner | undefined> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as Partial<Owner>;
    if (typeof owner.pid === 'number') return { pid: owner.pid, host: owner.host ?? '', since: owner.since ?? '?' };
  } catch {
    // An unreadable or half-written lock file is treated as stale below.
  }
  return undefined;
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
