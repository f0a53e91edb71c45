import { constants, type Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { RabbitError } from './errors.js';

/**
 * How the tool creates and reopens what it keeps on disk, on a machine other users share (as borg
 * and ssh do): what it creates is the user's alone (files 0600, folders 0700, whatever the umask);
 * nothing is opened through a symbolic link; and what it finds already there is used only when it
 * is the user's own and no one else can write to it. Another user who plants a folder, a journal
 * or a lock beside an output gets a refusal, never a say in what the run writes or trusts.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Why a symbolic link is refused, as whyNotOwn and the refusal's data say it. */
export const SYMLINK = 'is a symbolic link';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = constants;

/**
 * Opens a new file with `flags` (O_WRONLY or O_RDWR, O_APPEND...): created exclusively, never
 * through a symlink, mode 0600 set on the open file itself (fchmod), so no umask and no chmod race
 * ever lets anyone else read it.
 */
export async function createPrivateFile(path: string, flags: number = constants.O_WRONLY): Promise<FileHandle> {
  const handle = await open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    await handle.chmod(PRIVATE_FILE_MODE);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return handle;
}

/** What a caller of openOwnFile adds to its checks and to its refusals. */
export interface OwnFileChecks {
  /** Added to a refusal's data (`flag`: the option the user chose this path with). */
  more?: Record<string, unknown>;
  /**
   * Looks at the opened file after its stat and before it is judged the user's own: a refusal of
   * its own (what the file is, what it holds) then comes first, whoever owns the file.
   */
  inspect?: (handle: FileHandle, stats: Stats) => Promise<void>;
  /** The mode a file of the user's own that others may write is mended to (`mend` in the refusal). */
  mendMode?: string;
}

/**
 * Opens a file that may already be there (a journal to resume, the pack to append to): never
 * through a symlink, never a FIFO or device (O_NONBLOCK so a FIFO cannot hang the open), and only
 * when it is the user's own and no one else may write it. A file this creates is 0600, and one
 * left by an earlier run is brought to 0600 too. `what` names it in the refusal; `checks` adds a
 * look at the file before the ownership check and what the refusal carries.
 */
export async function openOwnFile(
  path: string,
  flags: number,
  what: string,
  checks: OwnFileChecks = {},
): Promise<FileHandle> {
  const { more = {}, inspect, mendMode } = checks;
  let handle: FileHandle;
  // Truncated only once known to be ours: O_TRUNC at the open would empty another user's file first.
  const truncate = (flags & constants.O_TRUNC) !== 0;
  try {
    handle = await open(path, (flags & ~constants.O_TRUNC) | O_NOFOLLOW | O_NONBLOCK, PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw unsafePath(what, path, SYMLINK, more);
    throw error;
  }
  await closedOnFailure(handle, async () => {
    const stats = await handle.stat();
    await inspect?.(handle, stats);
    const why = whyNotOwn(stats, 'file');
    if (why !== undefined) {
      const mendable = mendMode !== undefined && stats.isFile() && stats.uid === process.getuid?.();
      throw unsafePath(what, path, why, mendable ? { ...more, mend: 'chmod', mode: mendMode } : more);
    }
    if (flags & (constants.O_WRONLY | constants.O_RDWR)) await handle.chmod(PRIVATE_FILE_MODE);
    if (truncate) await handle.truncate(0);
  });
  return handle;
}

/**
 * Runs the first steps on a file just opened, before anything that would close it holds it: if a
 * step fails, the file is closed here and the failure thrown on (else it is left to the garbage
 * collector, which Node warns about and will one day refuse).
 */
export async function closedOnFailure<T>(handle: FileHandle, steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** openOwnFile for reading; undefined when there is no such file. */
export async function openOwnFileIfAny(path: string, what: string): Promise<FileHandle | undefined> {
  try {
    return await openOwnFile(path, O_RDONLY, what);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Makes the folder, 0700, or accepts the one there when it is the user's own, a real folder (not
 * a symlink) and not writable by others. True when it was already there.
 */
export async function ensurePrivateDir(path: string, what: string): Promise<boolean> {
  try {
    // Created with at most 0700 (the umask only takes bits away), then set to exactly 0700: no
    // moment in which anyone else could enter it.
    await mkdir(path, { mode: PRIVATE_DIR_MODE });
    await chmod(path, PRIVATE_DIR_MODE);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  await checkOwnDir(path, what);
  return true;
}

/**
 * Throws UNSAFE_PATH unless `path` is a folder of the user's own, not a symlink, not writable by
 * others. `more` goes into the refusal's data (`flag`: the option the user named it with).
 */
export async function checkOwnDir(path: string, what: string, more: Record<string, unknown> = {}): Promise<void> {
  const stats = await lstat(path);
  const why = whyNotOwn(stats, 'folder');
  if (why === undefined) return;
  // The user's own folder that others may write to is mended, not moved aside: chmod 700.
  const own = stats.isDirectory() && !stats.isSymbolicLink() && stats.uid === process.getuid?.();
  throw unsafePath(what, path, why, own ? { ...more, mend: 'chmod' } : more);
}

/** Why what `stats` describes may not be trusted as the user's own, or undefined when it may. */
export function whyNotOwn(stats: Stats, kind: 'file' | 'folder'): string | undefined {
  if (stats.isSymbolicLink()) return SYMLINK;
  if (kind === 'file' ? !stats.isFile() : !stats.isDirectory())
    return kind === 'file' ? 'is not a regular file' : 'is not a folder';
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return `belongs to another user (uid ${stats.uid}, not ${uid})`;
  if ((stats.mode & 0o022) !== 0) return 'can be written by other users';
  return undefined;
}

/**
 * The refusal: what was found, why it is not used (`why` in its data too, so the error guide can
 * tell a link from another user's file), and (in the error guide) what to do with it.
 */
export function unsafePath(what: string, path: string, why: string, more: Record<string, unknown> = {}): RabbitError {
  return new RabbitError('UNSAFE_PATH', `${what} ${path} ${why}, so nothing in it is used`, {
    data: { path, why, ...more },
  });
}
