import { API_PREFIX } from '../archive/paths.js';
import { readArchiveManifest } from './read-manifest.js';
import type { Manifest } from './types.js';

/** One prototype of a previous archive: what exporting it cost then, for estimating this run. */
export interface PreviousCost {
  id: string;
  /** Resources archived from the service (generated viewer files not counted). */
  files: number;
  bytes: number;
  /** Resources that failed in that run: requested again this time. */
  errors: number;
  revision: number;
  lastModification: number | null;
}

/**
 * Per prototype of the archive at `archivePath`, its resources and bytes under the revision it
 * recorded. An unchanged prototype will cost exactly that again; a changed one about that.
 */
export async function previousCosts(archivePath: string): Promise<PreviousCost[]> {
  return costsOf(await readArchiveManifest(archivePath));
}

export function costsOf(manifest: Manifest): PreviousCost[] {
  const errors = new Map<string, number>();
  const owner = new RegExp(`^${API_PREFIX}prototypes/(\\d+)(?:\\.json$|/)`);
  for (const error of manifest.errors) {
    const id = owner.exec(error.source)?.[1];
    if (id !== undefined) errors.set(id, (errors.get(id) ?? 0) + 1);
  }
  return Object.entries(manifest.prototypes).map(([id, record]) => {
    let files = 0;
    let bytes = 0;
    for (const entry of record.revisions[String(record.revision)]?.files ?? []) {
      if (owner.exec(entry.source)?.[1] !== id) continue;
      files++;
      bytes += entry.size;
    }
    const failed = errors.get(id) ?? 0;
    return { id, files, bytes, errors: failed, revision: record.revision, lastModification: record.lastModification };
  });
}
