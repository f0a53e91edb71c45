import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { createPrivateFile, ensurePrivateDir } from '../core/private-files.js';

/**
 * A folder of documents: made 0700, or taken as it is only when it is the user's own and no one
 * else can write to it. In a folder another user may write to, a name the run is about to use can
 * be planted as a symlink to any file the run may write.
 */
export async function makeFolder(path: string): Promise<void> {
  try {
    await ensurePrivateDir(path, 'the output folder');
  } catch (error) {
    if (error instanceof RabbitError) throw error;
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the output folder ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Written under a fresh random name beside its final one (created exclusively, never through a
 * symlink, 0600 whatever the umask) and renamed, so a reader never sees half a document and no
 * name anyone could guess in advance is ever opened for writing.
 */
export async function writeAtomically(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.partial`);
  let created = false;
  try {
    const handle = await createPrivateFile(partial);
    created = true;
    try {
      for await (const chunk of chunks) await (typeof chunk === 'string' ? handle.write(chunk) : handle.write(chunk));
    } finally {
      await handle.close();
    }
    await rename(partial, path);
  } catch (error) {
    // Only a file this run created is removed: a name that was taken is someone else's.
    if (created) await rm(partial, { force: true });
    if (error instanceof RabbitError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new RabbitError(
      code === 'ENOSPC' ? 'DISK_FULL' : 'OUTPUT_UNWRITABLE',
      `cannot write ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
