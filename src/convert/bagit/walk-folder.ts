import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';

/**
 * Every entry under `root`, depth first, each with its path relative to `root` (`/`-separated),
 * one folder read at a time. Not `opendir(root, { recursive: true })`: on Node 20 it loses
 * entries once a folder takes more than one read (666 of a bag's 20,280 files were listed).
 */
export async function* walkFolder(root: string): AsyncGenerator<{ path: string; entry: Dirent }> {
  const folders: string[] = [''];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    const dir = await opendir(folder === '' ? root : `${root}/${folder}`);
    for await (const entry of dir) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) folders.push(path);
      yield { path, entry };
    }
  }
}
