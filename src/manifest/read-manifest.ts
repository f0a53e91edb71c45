import { basename } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { openZip, type ZipReader } from '../archive/zip-reader.js';
import { ManifestReadError, streamManifest, type ManifestHead, type ManifestVisitor, type StreamManifestOptions } from './manifest-stream.js';
import { MANIFEST_PATH } from './types.js';

/**
 * Streams the manifest of an open archive through `visitor`, shape-checking it piece by piece,
 * and returns its head. Throws ARCHIVE_CORRUPT when it is missing, damaged or not ours; the
 * entries it lists are not checked here (their sha256 is checked by whoever reads them).
 */
export async function readManifestFrom(
  reader: ZipReader,
  visitor: ManifestVisitor = {},
  options: StreamManifestOptions = {},
): Promise<ManifestHead> {
  const name = basename(reader.path);
  if (!reader.entries.has(MANIFEST_PATH)) {
    throw new RabbitError('ARCHIVE_CORRUPT', `${name} has no ${MANIFEST_PATH}; it was not written by rabbit-export`);
  }
  try {
    return await streamManifest(await reader.openEntry(MANIFEST_PATH), visitor, options);
  } catch (error) {
    if (isRabbitError(error) || !(error instanceof ManifestReadError)) throw error;
    const message =
      error.kind === 'json'
        ? `${MANIFEST_PATH} in ${name} is not valid JSON`
        : `${MANIFEST_PATH} in ${name} is not a manifest: ${error.message}`;
    throw new RabbitError('ARCHIVE_CORRUPT', message, { cause: error });
  }
}

/** Opens the archive, streams its manifest through `visitor` and closes it again. */
export async function readArchiveManifest(
  path: string,
  visitor: ManifestVisitor = {},
  options: StreamManifestOptions = {},
): Promise<ManifestHead> {
  const reader = await openZip(path);
  try {
    return await readManifestFrom(reader, visitor, options);
  } finally {
    reader.close();
  }
}
