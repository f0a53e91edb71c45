import { access, constants, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { isProcessAlive } from '../core/process-alive.js';

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
  const existing = await stat(paths.out).catch(() => undefined);
  if (existing?.isDirectory())
    throw new RabbitError('USAGE', `--out ${paths.out} is a directory; give a file name such as backup.zip`);
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

export async function makeWorkDir(paths: OutputPaths): Promise<boolean> {
  const existed = await stat(paths.work).then(
    () => true,
    () => false,
  );
  try {
    await mkdir(paths.work, { recursive: true });
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the work directory ${paths.work}`, { cause: error });
  }
  return existed;
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
    if (match && !isProcessAlive(Number(match[1]))) await rm(join(paths.dir, name), { force: true });
  }
}

/**
 * After a run gave up on an outage its archive is incomplete and its bodies stay in the work
 * directory: this notes which archive (by size and time), so the same command run again may
 * replace exactly that file, and no other, without --force.
 */
export async function markResumable(paths: OutputPaths): Promise<void> {
  const written = await stat(paths.out);
  await writeFile(paths.resumable, JSON.stringify({ size: written.size, mtimeMs: written.mtimeMs }));
}

/** Whether the file at `out` is the archive a run that gave up on an outage left to be resumed. */
export async function isResumableArchive(out: string): Promise<boolean> {
  const paths = outputPaths(out);
  const existing = await stat(paths.out).catch(() => undefined);
  return existing !== undefined && existing.isFile() && (await isResumable(paths, existing));
}

async function isResumable(paths: OutputPaths, existing: Stats): Promise<boolean> {
  const text = await readFile(paths.resumable, 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  try {
    const mark = JSON.parse(text) as { size?: unknown; mtimeMs?: unknown };
    return mark.size === existing.size && mark.mtimeMs === existing.mtimeMs;
  } catch {
    return false;
  }
}
