import { mkdir, open, rename, rm } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';

export async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the output folder ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Written next to its final name and renamed, so a reader never sees half a document. */
export async function writeAtomically(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<void> {
  const partial = `${path}.partial`;
  try {
    const handle = await open(partial, 'w');
    try {
      for await (const chunk of chunks) await (typeof chunk === 'string' ? handle.write(chunk) : handle.write(chunk));
    } finally {
      await handle.close();
    }
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    if (error instanceof RabbitError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new RabbitError(
      code === 'ENOSPC' ? 'DISK_FULL' : 'OUTPUT_UNWRITABLE',
      `cannot write ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
