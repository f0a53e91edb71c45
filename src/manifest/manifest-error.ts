import type { RabbitError } from '../core/errors.js';
import { withoutQueries } from '../core/redact.js';
import type { ManifestError } from './types.js';

/**
 * The manifest's record of a resource that failed: the one place a RabbitError's fields become an
 * `errors[]` entry, so the crawl, the assets and the deadline record the same things the same way.
 */
export function manifestErrorOf(source: string, error: RabbitError): ManifestError {
  return {
    source,
    code: error.code,
    message: withoutQueries(error.message),
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.id !== undefined ? { id: error.id } : {}),
    ...(error.attempts !== undefined ? { attempts: error.attempts } : {}),
  };
}
