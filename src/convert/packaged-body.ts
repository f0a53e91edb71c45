import { isRabbitError, RabbitError } from '../core/errors.js';
import type { FileEntry } from '../manifest/types.js';
import type { PackageJob } from './formats/archive-format.js';

/** No body the service sends comes near this (the crawl caps them lower). */
const MAX_BODY_BYTES = 1024 * 1024 * 1024;

/**
 * An entry's body for a package (a WACZ record, a bag's payload file), checked against the
 * manifest as the archive reads it; undefined for a body the archive holds missing or damaged,
 * which the package leaves out and counts. An interrupted run stops here, between bodies.
 */
export async function packagedBody(job: PackageJob, entry: FileEntry): Promise<Buffer | undefined> {
  if (job.signal?.aborted) throw new RabbitError('INTERRUPTED', 'the conversion was interrupted');
  try {
    return await job.archive.body(entry, MAX_BODY_BYTES);
  } catch (error) {
    if (!isRabbitError(error, 'ARCHIVE_CORRUPT')) throw error;
    return undefined;
  }
}
