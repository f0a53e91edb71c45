import { basename } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { openZip, type ZipReader } from '../archive/zip-reader.js';
import {
  ManifestReadError,
  streamManifest,
  type ManifestHead,
  type ManifestVisitor,
  type StreamManifestOptions,
} from './manifest-stream.js';
import { MANIFEST_PATH } from './types.js';

/**
 * Why an archive's manifest could not be read: it is absent, its bytes are damaged in the zip
 * (the reader's ARCHIVE_CORRUPT as it was raised), or it is not JSON of our shape.
 */
export type ManifestFault = 'missing' | 'damaged' | 'invalid';

export type ManifestRead = { ok: true; head: ManifestHead } | { ok: false; fault: ManifestFault; error: RabbitError };

/**
 * Streams the manifest of an open archive through `visitor`, shape-checking it piece by piece,
 * and returns its head, or what kept it from being read: the one place the manifest is found,
 * streamed and judged, for the readers that refuse a bad one and for verify, which reports it.
 * The entries it lists are not checked here (their sha256 is checked by whoever reads them).
 */
export async function tryReadManifest(
  reader: ZipReader,
  visitor: ManifestVisitor = {},
  options: StreamManifestOptions = {},
): Promise<ManifestRead> {
  const name = basename(reader.path);
  if (!reader.entries.has(MANIFEST_PATH)) {
    const message = `${name} has no ${MANIFEST_PATH}; it was not written by rabbit-export or lost its index`;
    return {
      ok: false,
      fault: 'missing',
      error: new RabbitError('ARCHIVE_CORRUPT', message, { entry: MANIFEST_PATH }),
    };
  }
  try {
    return { ok: true, head: await streamManifest(await reader.openEntry(MANIFEST_PATH), visitor, options) };
  } catch (error) {
    if (isRabbitError(error)) return { ok: false, fault: 'damaged', error };
    if (!(error instanceof ManifestReadError)) throw error;
    const message =
      error.kind === 'json'
        ? `${MANIFEST_PATH} in ${name} is not valid JSON`
        : `${MANIFEST_PATH} in ${name} is not a manifest: ${error.message}`;
    return {
      ok: false,
      fault: 'invalid',
      error: new RabbitError('ARCHIVE_CORRUPT', message, { cause: error, entry: MANIFEST_PATH, reason: error.message }),
    };
  }
}

/** The manifest's head, its pieces streamed through `visitor`; ARCHIVE_CORRUPT when it is missing, damaged or not ours. */
export async function readManifestFrom(
  reader: ZipReader,
  visitor: ManifestVisitor = {},
  options: StreamManifestOptions = {},
): Promise<ManifestHead> {
  const read = await tryReadManifest(reader, visitor, options);
  if (!read.ok) throw read.error;
  return read.head;
}

/** Opens the archive, streams its manifest through `visitor` and closes it again. */
export async function readArchiveManifest(
  path: string,
  visitor: ManifestVisitor = {},
  options: StreamManifestOptions = {},
): Promise<ManifestHead> {
  // Nothing but the manifest is read: no index of the other entries is built.
  const reader = await openZip(path, { only: [MANIFEST_PATH] });
  try {
    return await readManifestFrom(reader, visitor, options);
  } finally {
    reader.close();
  }
}
