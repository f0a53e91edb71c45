import { basename } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { openZip, type ZipReader } from '../archive/zip-reader.js';
import { checkManifestShape } from './manifest-shape.js';
import type { Manifest } from './types.js';
import { MANIFEST_PATH } from './types.js';

/** A manifest bigger than this is not one we wrote (100 000 files make about 30 MB). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/**
 * The manifest of an open archive, shape-checked. Throws ARCHIVE_CORRUPT when it is missing,
 * damaged or not ours; the entries it lists are not checked here (their sha256 is checked by
 * whoever reads them).
 */
export async function readManifestFrom(reader: ZipReader): Promise<Manifest> {
  const name = basename(reader.path);
  if (!reader.entries.has(MANIFEST_PATH)) {
    throw new RabbitError('ARCHIVE_CORRUPT', `${name} has no ${MANIFEST_PATH}; it was not written by rabbit-export`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse((await reader.readEntry(MANIFEST_PATH, MAX_MANIFEST_BYTES)).toString('utf8'));
  } catch (error) {
    if (isRabbitError(error)) throw error;
    throw new RabbitError('ARCHIVE_CORRUPT', `${MANIFEST_PATH} in ${name} is not valid JSON`, { cause: error });
  }
  const issues = checkManifestShape(parsed);
  if (issues.length > 0) {
    throw new RabbitError('ARCHIVE_CORRUPT', `${MANIFEST_PATH} in ${name} is not a manifest: ${issues[0]}`);
  }
  return parsed as Manifest;
}

/** Opens the archive, reads its manifest and closes it again: a few kilobytes of any archive. */
export async function readArchiveManifest(path: string): Promise<Manifest> {
  const reader = await openZip(path);
  try {
    return await readManifestFrom(reader);
  } finally {
    reader.close();
  }
}
