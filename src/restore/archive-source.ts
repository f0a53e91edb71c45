import { basename } from 'node:path';
import { openZip } from '../archive/zip-reader.js';
import { RabbitError } from '../core/errors.js';
import { readManifestFrom } from '../manifest/read-manifest.js';
import type { FileEntry, PrototypeRecord } from '../manifest/types.js';
import { readVerified } from '../storage/read-verified.js';

/**
 * The only place the restore reads an archive. It needs two things: which revision of one
 * prototype the archive holds, and the bytes of a few of that revision's entries. Keeping it to
 * this narrow interface lets the archive's read side change (streamed manifests, zip indexes)
 * without touching the restore.
 */
export interface ArchivedPrototype {
  readonly prototypeId: string;
  readonly revision: number;
  /** Whether the export that wrote the archive got every resource of this prototype. */
  readonly complete: boolean;
  /**
   * An entry of that revision by its name below the revision folder (`pages.json`,
   * `pages/page1/elements.json`), checked against the manifest's size and sha256; undefined when
   * the archive does not hold it.
   */
  read(relative: string, maxBytes: number): Promise<Buffer | undefined>;
  close(): void;
}

export async function openArchivedPrototype(path: string, prototypeId: string): Promise<ArchivedPrototype> {
  const reader = await openZip(path);
  try {
    // One prototype's record, its entries included; the rest of the manifest streams past.
    let record: PrototypeRecord | undefined;
    await readManifestFrom(
      reader,
      {
        prototype(id, found) {
          if (id === prototypeId) record = found;
        },
      },
      { keepPrototypeFiles: true },
    );
    if (record === undefined) {
      throw new RabbitError('USAGE', `${basename(path)} holds no prototype ${prototypeId}`);
    }
    const revision = record.revisions[String(record.revision)];
    if (revision === undefined) {
      throw new RabbitError(
        'ARCHIVE_CORRUPT',
        `${basename(path)} lists no files for revision ${record.revision} of prototype ${prototypeId}`,
      );
    }
    const prefix = `prototypes/${prototypeId}/r${record.revision}/`;
    const files = new Map<string, FileEntry>();
    for (const file of revision.files) {
      if (file.path.startsWith(prefix)) files.set(file.path.slice(prefix.length), file);
    }
    return {
      prototypeId,
      revision: record.revision,
      complete: record.complete,
      async read(relative, maxBytes) {
        const file = files.get(relative);
        if (file === undefined || !reader.entries.has(file.path)) return undefined;
        if (file.size > maxBytes) {
          throw new RabbitError(
            'ARCHIVE_CORRUPT',
            `${file.path} holds ${file.size} bytes, more than the ${maxBytes} a restore reads`,
          );
        }
        return readVerified(
          reader.readEntry(file.path, maxBytes),
          file,
          `${file.path} in ${basename(path)} does not match its manifest entry (size or sha256)`,
        );
      },
      close: () => reader.close(),
    };
  } catch (error) {
    reader.close();
    throw error;
  }
}
