import { RabbitError } from '../core/errors.js';
import { redactUrl } from '../core/redact.js';

/** Same-origin redirects followed for one request before it is recorded as failed. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

export type RedirectDecision = { follow: string } | { refuse: RabbitError };

/**
 * What to do with a redirect answer to a GET of `source` (whose request path, query included, was
 * `from` on `origin`). Only a Location on the same origin (scheme, host and port) is followed: the
 * key rides in the query string, and a redirect elsewhere would hand it to a host the user never
 * named. Anything else becomes the resource's error, naming the status and the Location with any
 * key in it removed.
 */
export function decideRedirect(
  origin: string,
  from: string,
  source: string,
  status: number,
  location: string | undefined,
  hops: number,
): RedirectDecision {
  const refuse = (why: string): RedirectDecision => ({
    refuse: new RabbitError('HTTP_STATUS', `GET ${source} answered ${status} ${why}`, {
      source,
      method: 'GET',
      status,
      errorClass: 'resource',
    }),
  });
  if (!location) return refuse('without a Location');
  let target: URL;
  try {
    target = new URL(location, `${origin}${from}`);
  } catch {
    return refuse(`to an unreadable Location ${shown(location)}`);
  }
  if (target.origin !== origin) return refuse(`to another origin, not followed: Location ${shown(target.href)}`);
  if (hops >= MAX_REDIRECTS)
    return refuse(`after ${MAX_REDIRECTS} redirects, not followed: Location ${shown(target.href)}`);
  // Whatever key the Location carries is dropped; the client adds its own again.
  if (target.searchParams.has('api_key')) target.searchParams.delete('api_key');
  return { follow: `${target.pathname}${target.search}` };
}

/** A Location for a message: no key, no credentials, no control characters, bounded length. */
function shown(location: string): string {
  const clean = Array.from(redactUrl(location), (c) =>
    c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? '?' : c,
  ).join('');
  return JSON.stringify(clean.length > 300 ? `${clean.slice(0, 300)}...` : clean);
}
