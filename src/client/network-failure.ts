import { connect as tlsConnect } from 'node:tls';
import { isIP } from 'node:net';
import { RabbitError, type ErrorCode } from '../core/errors.js';
import { isLoopbackHost } from './base-url.js';
import { proxyAddress, proxyFailureWords, proxyNoteOf } from './proxy-failure.js';

// The one place that names a failed connection in words: which system code means what, and the
// scheme written for a port that speaks the other protocol. OpenSSL's and undici's own texts
// ("ssl3_get_record:wrong version number", "Expected HTTP/") never reach the user.

const TLS_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * What OpenSSL says when the first bytes back to its ClientHello are not a TLS record: a plain
 * HTTP server's "HTTP/1.1 400" read as a record header ("wrong version number"; some versions
 * read its length instead: "packet length too long").
 */
const PLAIN_ANSWER_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let cause: unknown = error; cause instanceof Error && chain.length < 8; cause = cause.cause) chain.push(cause);
  return chain;
}

const codeOf = (error: Error): string | undefined => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
};

/** A TLS handshake that got a plain HTTP answer: https:// to a port that speaks HTTP. */
export function isPlainAnswerToTls(error: unknown): boolean {
  return causes(error).some((cause) => PLAIN_ANSWER_CODES.has(codeOf(cause) ?? ''));
}

/**
 * An HTTP request answered with a TLS record (an alert or a handshake: content type 0x15 or 0x16,
 * version 3.x): http:// to a port that speaks TLS. undici's parser error keeps the bytes it
 * refused (its `code` is not always set).
 */
export function isTlsAnswerToHttp(error: unknown): boolean {
  return causes(error).some((cause) => {
    const data = (cause as { data?: unknown }).data;
    return (
      (cause.name === 'HTTPParserError' || codeOf(cause)?.startsWith('HPE_') === true) &&
      typeof data === 'string' &&
      (data.charCodeAt(0) === 0x15 || data.charCodeAt(0) === 0x16) &&
      data.charCodeAt(1) === 0x03
    );
  });
}

/**
 * Whether `host:port` answers a TLS ClientHello as a TLS server: a finished handshake, a
 * certificate we do not trust, or a TLS alert all say so. Nothing is sent past the handshake and
 * the connection is dropped at once; a silent port, a refusal or a plain answer say no.
 */
export function speaksTls(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const bare = host.replace(/^\[|\]$/g, '');
    const socket = tlsConnect({ host: bare, port, ...(isIP(bare) === 0 ? { servername: bare } : {}) });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('secureConnect', () => done(true));
    socket.once('error', (error) => {
      const code = codeOf(error) ?? '';
      done(TLS_CERT_CODES.has(code) || /^ERR_SSL_(SSLV3|TLSV1)_ALERT_/.test(code));
    });
  });
}

/** Where a connection went: the service's origin, and the proxy in front of it if any. */
export interface Route {
  origin: URL;
  basePath: string;
  proxy?: URL | undefined;
}

/**
 * `https://host:port` spelled with the other scheme, the port kept whenever it is not the new
 * scheme's default: the port is what answered, whatever the scheme said.
 */
function switchScheme(url: URL, basePath = ''): string {
  const scheme = url.protocol === 'https:' ? 'http' : 'https';
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const defaultPort = scheme === 'https' ? 443 : 80;
  return `${scheme}://${url.hostname}${port === defaultPort ? '' : `:${port}`}${basePath}`;
}

/**
 * The scheme written for a port that speaks the other protocol, as a typed error (fatal: every
 * request would fail the same way). `proxyLeg` says the mismatch is the proxy's (an https://
 * proxy URL for a proxy that takes plain HTTP); its suggestion then names no URL, which may hold
 * a password.
 */
export function wrongScheme(
  error: unknown,
  route: Route,
  request: { method: string; source: string },
  proxyLeg = false,
): RabbitError {
  const url = `${route.origin.origin}${route.basePath}${request.source}`;
  const tried = `(${request.method} ${url})`;
  if (proxyLeg && route.proxy) {
    const variable = route.origin.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
    return new RabbitError(
      'WRONG_SCHEME',
      `the proxy ${proxyAddress(route.proxy)} answers in plain HTTP, and its URL starts with https:// ${tried}`,
      { source: request.source, method: request.method, cause: error, data: { target: 'proxy', variable, url } },
    );
  }
  const address = `${route.origin.hostname}:${route.origin.port || (route.origin.protocol === 'https:' ? 443 : 80)}`;
  const suggestion = switchScheme(route.origin, route.basePath);
  const words =
    route.origin.protocol === 'https:'
      ? `${address} answers in plain HTTP, not HTTPS: its URL starts with https://`
      : `${address} speaks HTTPS (TLS), and its URL starts with http://`;
  return new RabbitError('WRONG_SCHEME', `${words} ${tried}`, {
    source: request.source,
    method: request.method,
    cause: error,
    data: {
      target: 'service',
      suggestion,
      url,
      // Plain http to a host that is not loopback is refused unless the user says so.
      ...(suggestion.startsWith('http:') && !isLoopbackHost(route.origin.hostname) ? { insecure: 'yes' } : {}),
    },
  });
}

/** What a failed first contact means, from the system's code anywhere down the cause chain. */
export function networkReason(error: RabbitError): { code: ErrorCode; words: string } {
  // Through a proxy, a failure that is surely the proxy's is named as such, not blamed on the service.
  const proxied = proxyNoteOf(error);
  if (proxied?.failure) {
    const { trouble, status } = proxied.failure;
    const code = trouble === 'refused' ? 'PROXY_REFUSED' : status === 407 ? 'PROXY_AUTH' : 'PROXY_FAILED';
    return { code, words: proxyFailureWords(proxied.failure) };
  }
  // A failure inside the tunnel (a timeout, a connection cut) may be either's: say which way it went.
  const via = proxied ? ` through the proxy ${proxied.proxy}` : '';
  const chain = causes(error.cause);
  const codes = chain.map(codeOf).filter((code): code is string => code !== undefined);
  const said = chain.at(-1)?.message ?? '';
  const tls = codes.find((code) => TLS_CERT_CODES.has(code));
  if (tls !== undefined)
    return { code: 'TLS_CERTIFICATE', words: `the service's TLS certificate is not trusted (${tls})` };
  if (codes.includes('ECONNREFUSED')) return { code: 'CONNECTION_REFUSED', words: 'the connection was refused' };
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN'))
    return { code: 'HOST_NOT_FOUND', words: 'the host name is not known' };
  if (error.code === 'TIMEOUT') return { code: 'NO_ANSWER', words: `the service did not answer in time${via}` };
  // The system's own words, without its code names: "other side closed", "socket hang up".
  const words = said.replace(/\b[A-Z][A-Z0-9_]{3,}\b:?\s*/g, '').trim();
  return { code: 'HOST_UNREACHABLE', words: `the connection to the service${via} failed${words ? ` (${words})` : ''}` };
}

/**
 * A request that failed on the network, said as export says its first contact: what the system's
 * code means, then the request and the address it went to, with a code the CLI's guide gives a
 * next step for (CONNECTION_REFUSED, HOST_NOT_FOUND...). Every command that talks to the service
 * ends through this (src/cli/run.ts), so verify --against-live and restore explain the same
 * failure in the same words. Anything else is returned as it is.
 */
export function explainNetworkFailure(error: unknown): unknown {
  if (!(error instanceof RabbitError) || (error.code !== 'NETWORK' && error.code !== 'TIMEOUT')) return error;
  const reason = networkReason(error);
  const request = [error.method ?? 'GET', sourceIn(error)].filter((part) => part !== undefined).join(' ');
  const where = addressIn(error);
  return new RabbitError(reason.code, `${reason.words} (${request}${where ? ` at ${where}` : ''})`, {
    ...(error.source !== undefined ? { source: error.source } : {}),
    cause: error,
    ...(error.data !== undefined ? { data: error.data } : {}),
  });
}

/** The API path of the request that failed, from the error or the first of its causes that names one. */
function sourceIn(error: RabbitError): string | undefined {
  for (const cause of causes(error)) {
    const source = (cause as { source?: unknown }).source;
    if (typeof source === 'string') return source;
  }
  return undefined;
}

/** host:port (or the host name that did not resolve) from the system error down the cause chain. */
function addressIn(error: RabbitError): string | undefined {
  for (const cause of causes(error)) {
    const { hostname, address, port } = cause as { hostname?: unknown; address?: unknown; port?: unknown };
    if (typeof hostname === 'string') return hostname;
    if (typeof address === 'string') return typeof port === 'number' ? `${address}:${port}` : address;
  }
  return undefined;
}
