import { createHash } from 'node:crypto';
import { RabbitError, type RabbitErrorDetails } from '../core/errors.js';

/** What a body was recorded as when it was first stored: the manifest's or the journal's size and SHA-256. */
export interface Recorded {
  size: number;
  sha256: string;
}

/**
 * Refuses a body that is not what was recorded: ARCHIVE_CORRUPT, the one code for a copy (in the
 * spool, an archive or a previous archive) damaged since it was written. `damaged` says which
 * copy and what to do about it.
 */
export function checkRecorded(
  actual: Recorded,
  recorded: Recorded,
  damaged: string,
  details: RabbitErrorDetails = {},
): void {
  if (actual.size !== recorded.size || actual.sha256 !== recorded.sha256)
    throw new RabbitError('ARCHIVE_CORRUPT', damaged, details);
}

/** Reads a stored body back and checks it against its record before anyone uses it. */
export async function readVerified(
  read: Promise<Buffer>,
  recorded: Recorded,
  damaged: string,
  details: RabbitErrorDetails = {},
): Promise<Buffer> {
  const data = await read;
  checkRecorded(
    { size: data.length, sha256: createHash('sha256').update(data).digest('hex') },
    recorded,
    damaged,
    details,
  );
  return data;
}
