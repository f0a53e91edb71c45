import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { openZip } from '../archive/zip-reader.js';
import { readManifestFrom } from '../manifest/read-manifest.js';
import type { FileEntry } from '../manifest/types.js';

/**
 * Everything convert reads from an archive goes through this narrow interface: the prototypes the
 * manifest lists, and one entry's bytes at a time (checked against the manifest's sha256). The
 * read side of big archives is being reworked elsewhere; only this file needs re-pointing.
 */
export interface ArchivedPrototype {
  id: string;
  name: string | null;
  revision: number;
  /** What the manifest says: false when the export could not fetch all of it. */
  complete: boolean;
  /** The files of its current revision, by path relative to `prototypes/{id}/r{rev}/`. */
  files: ReadonlyMap<string, FileEntry>;
}

export interface ArchiveSource {
  readonly path: string;
  prototypeIds(): string[];
  prototype(id: string): ArchivedPrototype | undefined;
  /** The entry's bytes; ARCHIVE_CORRUPT when they are not the ones the manifest recorded. */
  read(entry: FileEntry, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

export async function openArchiveSource(path: string): Promise<ArchiveSource> {
  const zip = await openZip(path);
  try {
    const manifest = await readManifestFrom(zip);
    const ids = Object.keys(manifest.prototypes).sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    return {
      path,
      prototypeIds: () => ids,
      prototype(id) {
        const record = manifest.prototypes[id];
        const revision = record?.revisions[String(record.revision)];
        if (record === undefined || revision === undefined) return undefined;
        const prefix = `prototypes/${id}/r${record.revision}/`;
        const files = new Map<string, FileEntry>();
        for (const file of revision.files) {
          if (file.path.startsWith(prefix)) files.set(file.path.slice(prefix.length), file);
        }
        return { id, name: record.name, revision: record.revision, complete: record.complete, files };
      },
      async read(entry, maxBytes) {
        const bytes = await zip.readEntry(entry.path, maxBytes);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        if (sha256 !== entry.sha256) {
          throw new RabbitError('ARCHIVE_CORRUPT', `${entry.path} in ${basename(path)} does not match its sha256 in the manifest`);
        }
        return bytes;
      },
      close: () => zip.close(),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}
