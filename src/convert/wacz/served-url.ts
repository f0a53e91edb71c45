import { servicePath } from '../../client/base-url.js';
import { RabbitError } from '../../core/errors.js';
import type { ManifestHead } from '../../manifest/manifest-stream.js';
import type { FileEntry } from '../../manifest/types.js';
import type { FetchTime } from './warc-records.js';

/**
 * The URL a body was fetched from: the service's origin and path, and the entry's source (an API
 * path, an older view's `?mode=`, or a page asset's path). The key travelled in the query and is
 * in no source; an `api_key` a hostile manifest put there anyway is taken out.
 */
export function servedUrl(baseUrl: string, source: string): string {
  const base = new URL(baseUrl);
  const url = new URL(`${base.origin}${servicePath(base.pathname)}${source}`);
  if (url.origin !== base.origin) {
    throw new RabbitError('ARCHIVE_CORRUPT', `the source ${JSON.stringify(source)} leads off the service's host`);
  }
  url.searchParams.delete('api_key');
  url.hash = '';
  return url.href;
}

/**
 * When a body was fetched. The manifest records it per entry (`fetchedAt`) since it has had the
 * field; an older archive's bodies were fetched between the run's start and end, and are dated
 * at its start, saying so. So is a `fetchedAt` no export writes: not an ISO 8601 time of a
 * four-digit year (a WARC-Date and a CDXJ timestamp have no room for more, and Date.parse takes
 * `1` for 2001), or later than the export's end. Earlier than its start is a body `--since` reused.
 */
export function fetchTimeOf(entry: FileEntry, head: ManifestHead): FetchTime {
  const at = entry.fetchedAt;
  const time = at !== undefined && TIMESTAMP.test(at) ? Date.parse(at) : Number.NaN;
  const finished = Date.parse(head.finishedAt);
  if (!Number.isNaN(time) && (Number.isNaN(finished) || time <= finished))
    return { at: new Date(time).toISOString(), exact: true };
  return { at: isoOr(head.startedAt), exact: false, between: [isoOr(head.startedAt), isoOr(head.finishedAt)] };
}

/** A time as the manifest's schema says one is written (Date.prototype.toISOString, or with an offset). */
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

function isoOr(text: string): string {
  const time = Date.parse(text);
  return Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString();
}
