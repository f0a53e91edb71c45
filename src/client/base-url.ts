import { RabbitError } from '../core/errors.js';
import { redactUrl, rememberCredentials } from '../core/redact.js';
import { proxyFor, type ProxySettings } from './proxy-env.js';

/** How the key may travel: checked with the base URL before anything is created or requested. */
export interface TransportPolicy {
  allowInsecureHttp?: boolean;
  proxy?: ProxySettings;
}

/**
 * The origin and path of a base URL, refused when it cannot be one. A plain http:// URL would
 * carry the key in clear text: only loopback (the fake service, a local tunnel) may use it, unless
 * the user says otherwise with --allow-insecure-http. The proxy this origin would go through must
 * be one we can use.
 */
export function parseBaseUrl(baseUrl: string, policy: TransportPolicy = {}): { origin: string; basePath: string } {
  const written = baseUrl.trim();
  // Credentials are refused below, yet the text is echoed in messages, --json and pings: from here
  // on they are hidden wherever they appear, however the URL around them parses.
  if (written.includes('@')) rememberCredentials(written);
  // `host:port` parses as a URL whose scheme is the host: say what was meant instead.
  if (/^[a-z0-9.-]+:\d+(\/.*)?$/i.test(written) || /^\[[0-9a-f:]+\]:\d+(\/.*)?$/i.test(written)) {
    throw new RabbitError('BAD_BASE_URL', `--base-url ${written} has no scheme`, {
      data: { suggestion: withScheme(written) },
    });
  }
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    // A scheme it has is not what is missing: `https://http://...` would be no advice.
    const hasScheme = /^[a-z][a-z0-9+.-]*:/i.test(written);
    throw new RabbitError('BAD_BASE_URL', `--base-url ${JSON.stringify(redactUrl(written))} is not a URL`, {
      ...(hasScheme ? {} : { data: { suggestion: redactUrl(withScheme(written.replace(/^\/+/, ''))) } }),
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RabbitError('BAD_BASE_URL', `--base-url must start with https:// or http://, not ${url.protocol}//`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new RabbitError('BAD_BASE_URL', '--base-url must not carry a query, fragment or credentials');
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !policy.allowInsecureHttp) {
    throw new RabbitError(
      'USAGE',
      `--base-url ${url.origin} is plain http: the API key would cross the network in clear text. ` +
        'Use https://, or pass --allow-insecure-http if you must',
    );
  }
  proxyFor(url, policy.proxy);
  return { origin: url.origin, basePath: servicePath(url.pathname) };
}

/**
 * The path the service lives under. The API is `{base}/rabbit/api/...`, so a base URL copied
 * from an API address (`https://host/rabbit` or `https://host/rabbit/api`) means the service at
 * the path above it: asking `{base}/rabbit/rabbit/api/...` can never be what was meant.
 */
export function servicePath(pathname: string): string {
  return pathname
    .replace(/\/+$/, '')
    .replace(/\/rabbit(\/api)?$/, '')
    .replace(/\/+$/, '');
}

/**
 * A base URL written without its scheme, with the one it most likely lacks: a service on loopback
 * is the fake service or a local tunnel, nearly always plain HTTP (and TLS to a plain port fails
 * with nothing a user can read); anywhere else the key must travel over TLS.
 */
export function withScheme(hostAndPath: string): string {
  const host = /^(\[[^\]]*\]|[^/:?#]*)/.exec(hostAndPath)?.[1] ?? '';
  return `${isLoopbackHost(host) ? 'http' : 'https'}://${hostAndPath}`;
}

/** localhost, 127.0.0.0/8 or ::1, as a URL's hostname spells them. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
