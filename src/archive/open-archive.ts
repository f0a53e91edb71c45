import { basename } from 'node:path';
import { RabbitError, isRabbitError, withData } from '../core/errors.js';
import {
  ManifestReadError,
  streamManifest,
  type ManifestHead,
  type ManifestVisitor,
} from '../manifest/manifest-stream.js';
import { MANIFEST_PATH, type FileEntry } from '../manifest/types.js';
import { readVerified } from '../storage/read-verified.js';
import { openCatalog, type ArchiveCatalog, type CatalogOptions } from './archive-catalog.js';
import { openZip, type ZipReader } from '../zip/zip-reader.js';

/**
 * Why an archive's manifest could not be read: it is absent, its bytes are damaged in the zip
 * (the reader's ARCHIVE_CORRUPT as it was raised), or it is not JSON of our shape.
 */
export type ManifestFault = 'missing' | 'damaged' | 'invalid';

export type ManifestRead = { ok: true; head: ManifestHead } | { ok: false; fault: ManifestFault; error: RabbitError };

export interface OpenArchiveOptions {
  /**
   * Only the manifest will be read (the head, or counts taken as it streams): the zip's index of
   * its other entries (12 bytes an entry) is then built only if something else is asked for.
   */
  manifestOnly?: boolean;
}

/**
 * An archive opened for reading: the one way in for every command that reads one (verify, ls,
 * diff, view, convert, restore, export --since, backup). Nothing is loaded at open but the zip's
 * compact index; the manifest streams through a visitor (`manifest`), or once into a catalog on
 * disk that finds any prototype's entries (`catalog`), and bodies come back checked against the
 * manifest (`body`).
 */
export interface Archive {
  readonly path: string;
  /** The file name, for messages. */
  readonly name: string;
  /** The zip underneath, for readers of the zip's own structure (verify, view). */
  readonly zip: ZipReader;
  /** Streams the manifest through `visitor`, shape-checking it piece by piece: its head, or why it cannot be read. */
  tryManifest(visitor?: ManifestVisitor): Promise<ManifestRead>;
  /** The same, with ARCHIVE_CORRUPT thrown when the manifest is missing, damaged or not ours. */
  manifest(visitor?: ManifestVisitor): Promise<ManifestHead>;
  /** Streams the manifest once, filing its entries on disk by zip position: see archive-catalog.ts. */
  catalog(options?: CatalogOptions): Promise<ArchiveCatalog>;
  /**
   * A listed entry's bytes, checked against its manifest entry (size and sha256) and the zip's CRC:
   * ARCHIVE_CORRUPT when they differ, when the entry is absent, or when it is larger than `maxBytes`.
   */
  body(entry: FileEntry, maxBytes?: number): Promise<Buffer>;
  close(): void;
}

/** Opens the zip (NOT_A_ZIP or ARCHIVE_CORRUPT as openZip tells them apart); nothing else is read yet. */
export async function openArchive(path: string, options: OpenArchiveOptions = {}): Promise<Archive> {
  const zip = await openZip(path, options.manifestOnly === true ? { only: [MANIFEST_PATH] } : {});
  const name = basename(path);
  const tryManifest = (visitor: ManifestVisitor = {}) => readManifest(zip, name, visitor);
  const manifest = async (visitor: ManifestVisitor = {}): Promise<ManifestHead> => {
    const read = await tryManifest(visitor);
    if (!read.ok) throw read.error;
    return read.head;
  };
  const archive: Archive = {
    path,
    name,
    zip,
    tryManifest,
    manifest,
    catalog: (catalogOptions = {}) => openCatalog(archive, catalogOptions),
    async body(entry, maxBytes) {
      if (maxBytes !== undefined && entry.size > maxBytes) {
        throw new RabbitError(
          'ARCHIVE_CORRUPT',
          `${entry.path} in ${name} holds ${entry.size} bytes, more than the ${maxBytes} read here`,
          { entry: entry.path, data: { archive: path } },
        );
      }
      return readVerified(
        zip.readEntry(entry.path, maxBytes),
        entry,
        `${entry.path} in ${name} does not match its manifest entry (size or sha256)`,
        { entry: entry.path, data: { archive: path } },
      );
    },
    close: () => zip.close(),
  };
  return archive;
}

/**
 * Opens the archive, streams its manifest through `visitor` and closes it again: for readers of
 * the manifest alone (ls, backup, a progress estimate).
 */
export async function readArchiveManifest(path: string, visitor: ManifestVisitor = {}): Promise<ManifestHead> {
  const archive = await openArchive(path, { manifestOnly: true });
  try {
    return await archive.manifest(visitor);
  } finally {
    archive.close();
  }
}

/**
 * A value out of shape stops every reading command before it is used (written into a file, a rule
 * or a request): what a user can do is find out where the archive came from, which the next step
 * says (a copy checked against its .sha256, or an export again: cli/damaged-archive.ts).
 */
const NOT_USED =
  '. Nothing was read from the archive past that value: it was changed after export or not written by rabbit-export';

/**
 * A manifest of a newer format than this version reads: its message says to update rabbit-export,
 * so it is not told as damage (no "changed after export", no copy to make again).
 */
const NEWER_FORMAT = /^formatVersion is \S+, newer than this tool reads/;

/** The one place the manifest is found, streamed and judged. The entries it lists are checked by whoever reads them. */
async function readManifest(zip: ZipReader, name: string, visitor: ManifestVisitor): Promise<ManifestRead> {
  // Whoever meets these errors is told what to do with the archive at this path (cli/error-guide.ts).
  const archive = zip.path;
  if (!zip.entries.has(MANIFEST_PATH)) {
    const message = `${name} has no ${MANIFEST_PATH}; it was not written by rabbit-export or lost its index`;
    return {
      ok: false,
      fault: 'missing',
      error: new RabbitError('ARCHIVE_CORRUPT', message, { entry: MANIFEST_PATH, data: { archive, foreign: true } }),
    };
  }
  try {
    return { ok: true, head: await streamManifest(await zip.openEntry(MANIFEST_PATH), visitor) };
  } catch (error) {
    if (isRabbitError(error)) return { ok: false, fault: 'damaged', error: aboutArchive(error, archive) };
    if (!(error instanceof ManifestReadError)) throw error;
    // The message of a formatVersion out of shape says what it is, and no more: a newer one says to update.
    const message =
      error.kind === 'json'
        ? `${MANIFEST_PATH} in ${name} is not valid JSON`
        : `${MANIFEST_PATH} in ${name} is not a manifest: ${error.message}${error.message.startsWith('formatVersion ') ? '' : NOT_USED}`;
    const newer = error.kind === 'shape' && NEWER_FORMAT.test(error.message);
    return {
      ok: false,
      fault: 'invalid',
      error: new RabbitError('ARCHIVE_CORRUPT', message, {
        cause: error,
        entry: MANIFEST_PATH,
        reason: error.message,
        data: newer ? { archive, newerFormat: true } : { archive, foreign: true },
      }),
    };
  }
}

/**
 * What a reader refused while the manifest streamed by (a value a `links` rule or a WACZ record
 * cannot hold, raised without knowing the file), named with the archive it was in.
 */
function aboutArchive(error: RabbitError, archive: string): RabbitError {
  if (error.code !== 'ARCHIVE_CORRUPT' || typeof error.data?.['archive'] === 'string') return error;
  return withData(error, { archive, foreign: true });
}
