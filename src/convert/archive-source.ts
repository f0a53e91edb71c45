import { rmSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { compareIds } from '../core/ids.js';
import { openZip } from '../archive/zip-reader.js';
import { readManifestFrom } from '../manifest/read-manifest.js';
import type { FileEntry } from '../manifest/types.js';
import { readVerified } from '../storage/read-verified.js';

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
  /** One prototype with its files, read when asked: one prototype's entries in memory at a time. */
  prototype(id: string): Promise<ArchivedPrototype | undefined>;
  /** The entry's bytes; ARCHIVE_CORRUPT when they are not the ones the manifest recorded. */
  read(entry: FileEntry, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

interface Listed {
  name: string | null;
  revision: number;
  complete: boolean;
  /** This prototype's entries of its revision, one JSON line each, in a temp folder. */
  spill: string | undefined;
}

/**
 * Opens the archive and streams its manifest once, filing each prototype's entries in a temp file
 * of their own, so that converting a prototype reads back only its entries.
 */
export async function openArchiveSource(path: string): Promise<ArchiveSource> {
  const zip = await openZip(path);
  const spillDir = await mkdtemp(join(tmpdir(), 'rabbit-convert-'));
  const release = (): void => {
    zip.close();
    rmSync(spillDir, { recursive: true, force: true });
  };
  try {
    const listed = new Map<string, Listed>();
    await readManifestFrom(
      zip,
      {
        async prototype(id, record) {
          const files = record.revisions[String(record.revision)]?.files;
          let spill: string | undefined;
          if (files !== undefined) {
            spill = join(spillDir, `${listed.size}.jsonl`);
            await writeFile(spill, files.map((file) => `${JSON.stringify(file)}\n`).join(''));
          }
          listed.set(id, { name: record.name, revision: record.revision, complete: record.complete, spill });
        },
      },
      { keepPrototypeFiles: true },
    );
    const ids = [...listed.keys()].sort(compareIds);
    return {
      path,
      prototypeIds: () => ids,
      async prototype(id) {
        const record = listed.get(id);
        if (record?.spill === undefined) return undefined;
        const prefix = `prototypes/${id}/r${record.revision}/`;
        const files = new Map<string, FileEntry>();
        for (const line of (await readFile(record.spill, 'utf8')).split('\n')) {
          if (line === '') continue;
          const file = JSON.parse(line) as FileEntry;
          if (file.path.startsWith(prefix)) files.set(file.path.slice(prefix.length), file);
        }
        return { id, name: record.name, revision: record.revision, complete: record.complete, files };
      },
      async read(entry, maxBytes) {
        return readVerified(
          zip.readEntry(entry.path, maxBytes),
          entry,
          `${entry.path} in ${basename(path)} does not match its sha256 in the manifest`,
        );
      },
      close: release,
    };
  } catch (error) {
    release();
    throw error;
  }
}
