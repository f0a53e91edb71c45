/**
 * What a reference found in a page or stylesheet points at, decided without any I/O. Only http(s)
 * URLs on the service's own origin, under its base path, are ever fetched; everything else is
 * either ignored (fragments, data: URIs, other schemes) or kept as a foreign reference.
 */
export interface ServiceLocation {
  /** e.g. `https://pidoco.com` */
  origin: string;
  /** The base URL's path without a trailing slash, usually empty. */
  basePath: string;
}

export type Resolution =
  | { kind: 'ignored'; reason: 'empty' | 'fragment' | 'data' | 'scheme' | 'invalid' }
  /**
   * Another host (or credentials in the URL): never fetched, listed in the manifest without any
   * api_key parameter. `servicePath` is set for a URL on the service's own host that lies outside
   * its base path: the page needs it, yet it cannot be fetched, which the archive must say.
   */
  | { kind: 'foreign'; url: string; servicePath?: string }
  /**
   * On the service host. `request` is what the HTTP client asks for (relative to the base path,
   * with any query but never an api_key); `source` is the same without the query, for the manifest.
   */
  | { kind: 'service'; source: string; request: string; url: string };

/** A reference longer than this is not a stylesheet or image URL (data: URIs are ignored before). */
const MAX_REFERENCE_LENGTH = 4096;

/** A URL as a browser reads it: leading and trailing C0 controls and spaces stripped, tabs and newlines inside dropped. */
export function urlAsRead(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
}

export function resolveReference(value: string, base: string, service: ServiceLocation): Resolution {
  const ref = urlAsRead(value);
  if (ref === '') return { kind: 'ignored', reason: 'empty' };
  if (ref.startsWith('#')) return { kind: 'ignored', reason: 'fragment' };
  if (/^data:/i.test(ref)) return { kind: 'ignored', reason: 'data' };
  if (ref.length > MAX_REFERENCE_LENGTH) return { kind: 'ignored', reason: 'invalid' };
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return { kind: 'ignored', reason: 'invalid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'ignored', reason: 'scheme' };
  url.hash = '';
  // A key in a reference must never travel on, nor be written anywhere.
  dropKeyParameters(url);
  if (!isServiceOrigin(url, service.origin) || url.username !== '' || url.password !== '') {
    return { kind: 'foreign', url: withoutCredentials(url) };
  }
  const path = url.pathname;
  if (service.basePath !== '' && !path.startsWith(`${service.basePath}/`))
    return { kind: 'foreign', url: url.href, servicePath: path };
  const source = path.slice(service.basePath.length);
  return { kind: 'service', source, request: `${source}${url.search}`, url: url.href };
}

/** Host names that all reach this machine: on the same scheme and port they are one server. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether the URL is on the service's origin. A service reached as `http://localhost:P` that names
 * itself `http://127.0.0.1:P` in its pages (or `[::1]`) is the same server: its assets are its own.
 */
export function isServiceOrigin(url: URL, origin: string): boolean {
  if (url.origin === origin) return true;
  if (!LOOPBACK_NAMES.has(url.hostname)) return false;
  let service: URL;
  try {
    service = new URL(origin);
  } catch {
    return false;
  }
  return LOOPBACK_NAMES.has(service.hostname) && url.protocol === service.protocol && url.port === service.port;
}

/**
 * Removes every `api_key` parameter, in any case of its name. Only touched when there is one:
 * re-serialising a query changes its encoding.
 */
function dropKeyParameters(url: URL): void {
  const names = [...new Set([...url.searchParams.keys()].filter((name) => name.toLowerCase() === 'api_key'))];
  for (const name of names) url.searchParams.delete(name);
}

function withoutCredentials(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

/** The URL a resource was served from, to resolve the references inside it against. */
export function serviceUrl(service: ServiceLocation, request: string): string {
  return `${service.origin}${service.basePath}${request}`;
}
