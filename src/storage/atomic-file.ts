import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory, tempPathFor } from './output-file.js';

/**
 * Replaces `path` with `text` so that a reader (sha256sum, node_exporter) sees the old file or the
 * new one, never half of one: written to a temp file in the same folder, forced to disk, renamed.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dirname(path));
}
