import { access, constants, lstat, readdir, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { isProcessAlive } from '../core/process-alive.js';
import { writeFileAtomic } from './atomic-file.js';
import { checkOwnDir, ensurePrivateDir, openOwnFileIfAny, whyNotOwn } from '../core/private-files.js';

/**
 * Every name an export uses on disk: the output, the work directory beside it (kept between an
 * interrupted run and the next) and what lives there. Temp files beside the output are
 * `.{name}.{pid}.{random}.tmp` (see the zip writer), which removeStaleTemps recognises.
 */
export interface OutputPaths {
  out: string;
  dir: string;
  /** Work directory beside the output: spool of bodies, journal, lock. */
  work: string;
  lock: string;
  spool: string;
  journal: string;
  /** The archive's file entries and errors while the crawl runs, filed by prototype. */
  entries: string;
  /** Names the incomplete archive a run left when it gave up on an outage: the next run may replace it. */
  resumable: string;
}

export function outputPaths(out: string): OutputPaths {
  const absolute = resolve(out);
  const dir = dirname(absolute);
  const work = join(dir, `.${basename(absolute)}.rabbit-work`);
  return {
    out: absolute,
    dir,
    work,
    lock: join(work, 'lock'),
    spool: join(work, 'spool'),
    journal: join(work, 'journal.jsonl'),
    entries: join(work, 'entries'),
    resumable: join(work, 'resumable.json'),
  };
}

/**
 * Checks made before any request: the output must not be silently replaced and its directory
 * must take files, so a long crawl never ends in "cannot write".
 */
export async function checkOutput(paths: OutputPaths, force: boolean): Promise<void> {
  const existing = await lstat(paths.out).catch(() => undefined);
  if (existing?.isDirectory())
    throw new RabbitError('USAGE', `--out ${paths.out} is a directory; give a file name such as backup.zip`);
  // --force replaces a file, never what a path leads on to (/dev/stdout, a FIFO, a symlink's target).
  if (existing !== undefined && !existing.isFile())
    throw new RabbitError('OUTPUT_KIND', `--out ${paths.out} is not a regular file, and is never replaced`, {
      data: { path: paths.out, expected: 'file' },
    });
  if (existing && !force && !(await isResumable(paths, existing))) {
    throw new RabbitError('OUTPUT_EXISTS', `${paths.out} already exists; pass --force to replace it`);
  }
  const dir = await stat(paths.dir).catch(() => undefined);
  if (!dir?.isDirectory())
    throw new RabbitError('OUTPUT_UNWRITABLE', `the output directory ${paths.dir} does not exist`);
  try {
    await access(paths.dir, constants.W_OK);
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `the output directory ${paths.dir} is not writable`, { cause: error });
  }
}

/**
 * Makes the work directory (0700), or takes up the one an earlier run left: only when it is the
 * user's own, a real folder and not writable by others. Another user could otherwise plant one
 * beside a shared output, with symlinks for the files this writes or a forged journal and spool
 * for it to resume from. True when it was already there.
 */
export async function makeWorkDir(paths: OutputPaths): Promise<boolean> {
  try {
    return await ensurePrivateDir(paths.work, 'the work directory');
  } catch (error) {
    if (isRabbitError(error)) throw error;
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the work directory ${paths.work}`, { cause: error });
  }
}

export async function removeWorkDir(paths: OutputPaths): Promise<void> {
  await rm(paths.work, { recursive: true, force: true });
}

/**
 * Temp files a killed run left beside the output (`.<name>.<pid>.<random>.tmp`): removed when
 * their process is gone, so a kill -9 during the last step does not leave gigabytes behind.
 */
export async function removeStaleTemps(paths: OutputPaths): Promise<void> {
  const prefix = `.${basename(paths.out)}.`;
  for (const name of await readdir(paths.dir).catch(() => [] as string[])) {
    const match = name.startsWith(prefix) ? /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (!match || isProcessAlive(Number(match[1]))) continue;
    // Only our own: in a shared folder the same name may be another user's file.
    const stats = await lstat(join(paths.dir, name)).catch(() => undefined);
    if (stats !== undefined && whyNotOwn(stats, 'file') === undefined) await rm(join(paths.dir, name), { force: true });
  }
}

/**
 * After a run gave up on an outage its archive is incomplete and its bodies stay in the work
 * directory: this notes which archive (by size and time), so the same command run again may
 * replace exactly that file, and no other, without --force.
 */
export async function markResumable(paths: OutputPaths): Promise<void> {
  const written = await stat(paths.out);
  await writeFileAtomic(paths.resumable, JSON.stringify({ size: written.size, mtimeMs: written.mtimeMs }));
}

/** Whether the file at `out` is the archive a run that gave up on an outage left to be resumed. */
export async function isResumableArchive(out: string): Promise<boolean> {
  const paths = outputPaths(out);
  const existing = await lstat(paths.out).catch(() => undefined);
  return existing !== undefined && existing.isFile() && (await isResumable(paths, existing));
}

/** Only a mark in a work directory of the user's own counts: a planted one must not unlock --force. */
async function isResumable(paths: OutputPaths, existing: Stats): Promise<boolean> {
  let text: string;
  try {
    await checkOwnDir(paths.work, 'the work directory');
    const handle = await openOwnFileIfAny(paths.resumable, 'the resume mark');
    if (handle === undefined) return false;
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
  try {
    const mark = JSON.parse(text) as { size?: unknown; mtimeMs?: unknown };
    return mark.size === existing.size && mark.mtimeMs === existing.mtimeMs;
  } catch {
    return false;
  }
}
