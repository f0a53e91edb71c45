import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { RabbitError, isRabbitError } from './errors.js';

/**
 * The file-system edge of writing an archive: where its temp files go, how the rename is made
 * durable, and which error code each failure becomes.
 */

/** `.<name>.<pid>.<random>.tmp` beside the target: the pattern removeStaleTemps cleans up after a kill. */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Makes a rename durable; platforms that cannot fsync a directory simply skip it. */
export async function syncDirectory(directory: string): Promise<void> {
  let dir: FileHandle | undefined;
  try {
    dir = await open(directory, 'r');
    await dir.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
  } finally {
    await dir?.close().catch(() => undefined);
  }
}

export function interrupted(signal: AbortSignal | undefined): RabbitError {
  return new RabbitError('INTERRUPTED', 'writing the archive was interrupted', { cause: signal?.reason });
}

/** A source of an entry that cannot be read: the archive cannot be completed as asked. */
export function unreadable(file: string, name: string, cause: unknown): RabbitError {
  return new RabbitError('OUTPUT_UNWRITABLE', `cannot read ${file} for entry ${name}`, { cause, source: name });
}

/** Maps file-system failures to the codes the CLI turns into exit codes. */
export function outputError(error: unknown, target: string): RabbitError {
  if (isRabbitError(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new RabbitError('DISK_FULL', `no space left to write ${target}`, { cause: error });
  }
  const reason =
    code === 'ENOENT' || code === 'ENOTDIR'
      ? 'its folder does not exist'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EROFS'
          ? 'the file system is read-only'
          : ((error as Error | undefined)?.message ?? String(error));
  return new RabbitError('OUTPUT_UNWRITABLE', `cannot write ${target}: ${reason}`, { cause: error });
}
