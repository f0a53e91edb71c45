import { chmod, lstat, mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { checkOwnDir } from '../core/private-files.js';

/**
 * One rule for everything a command writes, the rule of `git clone` and `cp`: the file or folder
 * asked for is created, its missing parents never are (a typo in a path must not grow a tree of
 * folders); what exists is replaced only with --force; a folder given where a file belongs, or a
 * file where a folder belongs, gets the same answer from every command.
 */
export interface OutputRule {
  /** The flag that named the path, for messages ("--out"). */
  flag: string;
  force: boolean;
}

/** A file to write (an archive): its folder must exist; an existing file needs --force. */
export async function checkOutputFile(path: string, rule: OutputRule): Promise<string> {
  const target = resolve(path);
  await requireParent(target, rule);
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new RabbitError('OUTPUT_KIND', `${rule.flag} ${target} is a folder, where a file belongs`, {
      data: { path: target, expected: 'file' },
    });
  }
  // --force replaces a regular file and nothing else: not a symlink (whatever it leads to),
  // /dev/stdout, a FIFO another process reads, a device.
  if (existing !== undefined && !existing.isFile()) {
    throw new RabbitError(
      'OUTPUT_KIND',
      `${rule.flag} ${target} is ${kindOf(existing)}, not a regular file, and is not replaced even with --force`,
      { data: { path: target, expected: 'file', found: kindOf(existing) } },
    );
  }
  if (existing !== undefined && !rule.force) {
    throw new RabbitError(
      'OUTPUT_EXISTS',
      `${rule.flag} ${target} already exists, and is not replaced without --force`,
      {
        data: { path: target },
      },
    );
  }
  return target;
}

/**
 * A folder to write into (convert's documents, backup's archives): created when missing and its
 * parent exists. An existing folder that holds anything needs --force, unless the command keeps
 * its files there by design (`mayHoldFiles`: backup's folder holds the nights before).
 */
export async function prepareOutputFolder(
  path: string,
  rule: OutputRule & { mayHoldFiles?: boolean },
): Promise<string> {
  return (await outputFolder(path, rule)).path;
}

/**
 * prepareOutputFolder, and a way to take the folder back when the command then fails before
 * writing anything: a failed run leaves no empty folder behind that the next run would trip on.
 */
export async function outputFolder(
  path: string,
  rule: OutputRule & { mayHoldFiles?: boolean },
): Promise<{ path: string; undo: () => Promise<void> }> {
  const target = resolve(path);
  const existing = await stat(target).catch(() => undefined);
  if (existing === undefined) {
    await requireParent(target, rule);
    try {
      // The user's alone (0700) whatever the umask: mkdir gives at most that, chmod makes it exact.
      await mkdir(target, { mode: 0o700 });
      await chmod(target, 0o700);
    } catch (error) {
      // Made by someone else in between is as good as made here.
      if ((error as { code?: string }).code !== 'EEXIST')
        throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create ${rule.flag} ${target}`, { cause: error });
    }
    // rmdir removes only an empty folder: anything written into it stays.
    return { path: target, undo: () => rmdir(target).catch(() => undefined) };
  }
  if (!existing.isDirectory()) {
    throw new RabbitError('OUTPUT_KIND', `${rule.flag} ${target} is a file, where a folder belongs`, {
      data: { path: target, expected: 'folder' },
    });
  }
  // Written into only when no one else may plant a name in it (a symlink where the next document
  // or archive goes, a forged archive): the user's own folder, not writable by group or others.
  await checkOwnDir(target, rule.flag, { flag: rule.flag });
  if (!rule.mayHoldFiles && !rule.force && (await readdir(target)).length > 0) {
    throw new RabbitError(
      'OUTPUT_EXISTS',
      `${rule.flag} ${target} is not empty, and what it holds is not replaced without --force`,
      { data: { path: target } },
    );
  }
  return { path: target, undo: async () => undefined };
}

/**
 * The checks of outputFolder without making anything: for a dry run. True when the folder exists,
 * false when it would be created.
 */
export async function checkOutputFolder(path: string, rule: OutputRule & { mayHoldFiles?: boolean }): Promise<boolean> {
  const target = resolve(path);
  const existing = await stat(target).catch(() => undefined);
  if (existing === undefined) {
    await requireParent(target, rule);
    return false;
  }
  await outputFolder(target, rule);
  return true;
}

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'of another kind';
}

async function requireParent(target: string, rule: OutputRule): Promise<void> {
  const parent = dirname(target);
  const info = await stat(parent).catch(() => undefined);
  if (info === undefined) {
    throw new RabbitError('OUTPUT_PARENT_MISSING', `${rule.flag} ${target}: the folder ${parent} does not exist`, {
      data: { path: target, parent },
    });
  }
  if (!info.isDirectory()) {
    // `parentOf` tells it from a file given as the folder itself: the path to change is then the
    // one of --out's folder, and "give the path of a folder" would lead an export to another refusal.
    throw new RabbitError('OUTPUT_KIND', `${rule.flag} ${target}: ${parent} is a file, where a folder belongs`, {
      data: { path: parent, expected: 'folder', parentOf: target },
    });
  }
}
