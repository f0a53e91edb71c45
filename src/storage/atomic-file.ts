import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory, tempPathFor } from '../core/output-file.js';
import { createPrivateFile } from '../core/private-files.js';

/**
 * Replaces `path` with `text` so that a reader (sha256sum, node_exporter) sees the old file or the
 * new one, never half of one: written to a temp file in the same folder, forced to disk, renamed.
 * The temp file is made exclusively and 0600, so the file that replaces `path` is the user's alone
 * and a symlink at `path` is replaced, never followed.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    const handle = await createPrivateFile(temp);
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
