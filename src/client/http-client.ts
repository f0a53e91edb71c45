import type { Dispatcher } from 'undici';
import type { ChunkSource } from '../core/read-chunks.js';
import { RabbitError } from '../core/errors.js';
import { redactUrl } from '../core/redact.js';
import { abortRelay } from './abort-relay.js';
import { Exchange, type HttpResponse } from './response-body.js';
import { createDispatcher } from './dispatcher.js';
import { proxyFor, type ProxySettings } from './proxy-env.js';
import { proxyAddress, proxyFailureOf, proxyFailureWords } from './proxy-failure.js';
import { parseBaseUrl } from './base-url.js';
import { isPlainAnswerToTls, isTlsAnswerToHttp, speaksTls, wrongScheme, type Route } from './network-failure.js';
import { decideRedirect, isRedirect } from './redirects.js';
import { isRetryableStatus } from './retry-policy.js';
import { ACCEPT_ENCODING } from './content-coding.js';

export interface HttpClientOptions {
  /** Service base URL, e.g. https://pidoco.com; the API lives under {baseUrl}/rabbit/api/. */
  baseUrl: string;
  /** Keep-alive connections to keep open: the crawl's concurrency. */
  connections: number;
  /** Connect, headers and body-idle timeout in milliseconds. */
  timeoutMs: number;
  /** Proxy settings (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) for the built-in pool. */
  proxy?: ProxySettings;
  /** Send the key over plain http to a host that is not loopback (--allow-insecure-http). */
  allowInsecureHttp?: boolean;
  /** A dispatcher to use instead of the built-in pool (tests). */
  dispatcher?: Dispatcher;
}

export type { HttpResponse } from './response-body.js';

export interface GetOptions {
  key: string;
  signal?: AbortSignal;
  ifModifiedSince?: string;
  /** Send no api_key (static assets on the service host). */
  anonymous?: boolean;
}

export interface SendOptions {
  key: string;
  /** The JSON text to send; none for DELETE. */
  body?: string;
  signal?: AbortSignal;
}

/**
 * Requests (GETs, and the restore's writes) against one service origin over a keep-alive pool sized to the crawl's concurrency,
 * directly or through a proxy. The key goes only into the query string of the outgoing request;
 * nothing returned or thrown here carries it. Redirects within the origin are followed a bounded
 * number of times; a redirect anywhere else is the resource's error, and the key stays here.
 */
export class HttpClient {
  readonly origin: string;
  readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** The proxy the built-in pool goes through, if any: failures name it. */
  private readonly proxy: URL | undefined;
  /**
   * Requests that may be handed to the dispatcher beyond `connections` to wait in its queue: one
   * for the built-in pool, which never sends more than `connections` at once, so a connection that
   * frees sends the next request without waiting for this process; none for a dispatcher from
   * outside, whose limits are not known here.
   */
  readonly queueAhead: number;

  /** `queueAhead` of a client with this dispatcher (none: the built-in pool), for a limiter made before it. */
  static queueAheadFor(dispatcher: Dispatcher | undefined): number {
    return dispatcher === undefined ? 1 : 0;
  }

  /** `host:port` of the proxy requests go through, if any: never its credentials. */
  get proxyHost(): string | undefined {
    return this.proxy && proxyAddress(this.proxy);
  }

  private readonly timeoutMs: number;

  constructor(options: HttpClientOptions) {
    const base = parseBaseUrl(options.baseUrl, { allowInsecureHttp: options.allowInsecureHttp ?? false });
    this.timeoutMs = options.timeoutMs;
    this.origin = base.origin;
    this.basePath = base.basePath;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.queueAhead = HttpClient.queueAheadFor(options.dispatcher);
    this.proxy = this.ownsDispatcher ? proxyFor(new URL(this.origin), options.proxy) : undefined;
    this.dispatcher =
      options.dispatcher ??
      createDispatcher({
        origin: this.origin,
        connections: options.connections,
        timeoutMs: options.timeoutMs,
        ...(options.proxy ? { proxy: options.proxy } : {}),
      });
  }

  /** GET an API path (e.g. `/rabbit/api/prototypes.json`) or a root-relative asset path. */
  async get(source: string, options: GetOptions): Promise<HttpResponse> {
    let path = `${this.basePath}${source}`;
    for (let hops = 0; ; hops++) {
      const response = await this.getOnce(source, path, options);
      // nginx answers plain HTTP on its TLS port with 400 ("The plain HTTP request was sent to HTTPS port").
      if (response.status === 400 && (await this.isTlsPort())) {
        await discardBody(response.body);
        throw wrongScheme(undefined, this.route, { method: 'GET', source });
      }
      if (!isRedirect(response.status)) return response;
      await discardBody(response.body);
      const decision = decideRedirect(this.origin, path, source, response.status, response.headers['location'], hops);
      if ('refuse' in decision) throw decision.refuse;
      path = decision.follow;
    }
  }

  private async getOnce(source: string, path: string, options: GetOptions): Promise<HttpResponse> {
    const query = options.anonymous ? '' : `${path.includes('?') ? '&' : '?'}${this.keyQuery(options.key)}`;
    let headers = options.anonymous ? ANONYMOUS_GET_HEADERS : API_GET_HEADERS;
    if (options.ifModifiedSince) headers = { ...headers, 'if-modified-since': options.ifModifiedSince };
    try {
      return await this.exchange(
        { origin: this.origin, path: `${path}${query}`, method: 'GET', headers },
        options.signal,
      );
    } catch (error) {
      throw await this.failure(error, source, options.signal, 'GET');
    }
  }

  /** The origin and proxy requests go to, for naming a failure. */
  private get route(): Route {
    return { origin: new URL(this.origin), basePath: this.basePath, proxy: this.proxy };
  }

  /**
   * A failed request as a typed error. A scheme that does not fit the port is named as such: an
   * https:// proxy URL is checked first when the TLS answer was plain, since its handshake and
   * the service's inside the tunnel fail alike.
   */
  private async failure(
    error: unknown,
    source: string,
    signal: AbortSignal | undefined,
    method: string,
  ): Promise<RabbitError> {
    if (!signal?.aborted) {
      const request = { method, source };
      if (isPlainAnswerToTls(error)) {
        const proxyLeg = this.proxy?.protocol === 'https:' && !(await this.probe(this.proxy));
        return wrongScheme(error, this.route, request, proxyLeg);
      }
      if (isTlsAnswerToHttp(error) || (isCutOff(error) && (await this.isTlsPort()))) {
        return wrongScheme(error, this.route, request);
      }
    }
    return toNetworkError(error, source, signal, method, this.proxy);
  }

  /**
   * Whether the http:// origin is in fact a TLS port: asked once, directly (a proxy between would
   * answer for itself), and only when an answer looked like it (a 400, a connection closed unanswered).
   */
  private isTlsPort(): Promise<boolean> {
    if (!this.ownsDispatcher || this.proxy || !this.origin.startsWith('http:')) return Promise.resolve(false);
    this.tlsPort ??= this.probe(new URL(this.origin));
    return this.tlsPort;
  }

  private tlsPort: Promise<boolean> | undefined;

  private probe(url: URL): Promise<boolean> {
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    // A TLS server answers a ClientHello at once; a plain one may wait for a request that never comes.
    return speaksTls(url.hostname, port, Math.min(this.timeoutMs, PROBE_TIMEOUT_MS));
  }

  /**
   * One request through the dispatcher's `dispatch`, its response handed over at the headers with
   * the body to be read (response-body.ts: why not undici's `request`).
   */
  private exchange(request: Dispatcher.DispatchOptions, signal: AbortSignal | undefined): Promise<HttpResponse> {
    const relay = signal ? abortRelay(signal) : undefined;
    if (relay?.aborted) return Promise.reject(relay.reason);
    return new Promise((resolve, reject) => {
      this.dispatcher.dispatch(request, new Exchange(resolve, reject, relay));
    });
  }

  /** `api_key=...` for a key, encoded once: a run asks with the same key or two a million times. */
  private keyQuery(key: string): string {
    if (key !== this.lastKey.key) this.lastKey = { key, query: `api_key=${encodeURIComponent(key)}` };
    return this.lastKey.query;
  }

  private lastKey = { key: '', query: '' };

  /**
   * A write (POST, PUT, DELETE) of a JSON body to an API path, over the same dispatcher as reads.
   * Whether to try again is the caller's call: a POST whose answer was lost may have been applied.
   */
  async send(method: 'POST' | 'PUT' | 'DELETE', source: string, options: SendOptions): Promise<HttpResponse> {
    try {
      return await this.exchange(
        {
          origin: this.origin,
          path: `${this.basePath}${source}?${this.keyQuery(options.key)}`,
          method,
          headers: API_HEADERS,
          ...(options.body !== undefined ? { body: options.body } : {}),
        },
        options.signal,
      );
    } catch (error) {
      throw await this.failure(error, source, options.signal, method);
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.destroy().catch(() => undefined);
  }
}

/** Unused bodies (errors, redirects) are read this far, so the connection stays reusable; a longer one is cut off. */
const DISCARD_LIMIT = 64 * 1024;

/** Reads and drops the body of an answer whose status says all we need (an error, a redirect). */
export async function discardBody(body: ChunkSource, onChunk?: (bytes: number) => void): Promise<void> {
  let read = 0;
  try {
    await body.read((chunk) => {
      read += chunk.length;
      onChunk?.(chunk.length);
      // Thrown to stop reading: the body is destroyed, and the error is no news (below).
      if (read > DISCARD_LIMIT) throw new Error('discarded');
      return undefined;
    });
  } catch {
    // An unused body that breaks off tells us nothing its status did not.
  }
}

const API_HEADERS: Readonly<Record<string, string>> = {
  accept: '*/*',
  'user-agent': 'rabbit-export',
  'content-type': 'application/json',
};
// Every GET asks for compression (content-coding.ts decodes whatever comes back); writes do not.
const API_GET_HEADERS: Readonly<Record<string, string>> = { ...API_HEADERS, 'accept-encoding': ACCEPT_ENCODING };
const ANONYMOUS_GET_HEADERS: Readonly<Record<string, string>> = {
  accept: '*/*',
  'user-agent': 'rabbit-export',
  'accept-encoding': ACCEPT_ENCODING,
};

/** How long a port has to answer a TLS ClientHello, when whether it speaks TLS is asked. */
const PROBE_TIMEOUT_MS = 5_000;

/** A connection closed or reset before any answer: what a TLS server does with a plain request. */
function isCutOff(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * A status the caller did not want, classed by whether another attempt may succeed; a parsed
 * Retry-After travels with it so the retry loop waits at least that long.
 */
export function statusError(method: string, source: string, status: number, retryAfterMs?: number): RabbitError {
  return new RabbitError('HTTP_STATUS', `${method} ${source} answered ${status}`, {
    source,
    method,
    status,
    errorClass: isRetryableStatus(status) ? 'retryable' : 'resource',
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/**
 * Map undici and socket failures to typed errors; these are all worth another attempt (a proxy
 * that is down or refuses the tunnel is waited out like the service). Through a proxy the error's
 * data names it by host:port, and says what the proxy did when the failure is surely its own
 * (proxy-failure.ts).
 */
export function toNetworkError(
  error: unknown,
  source: string,
  signal?: AbortSignal,
  method = 'GET',
  proxy?: URL,
): RabbitError {
  if (error instanceof RabbitError) return error;
  if (signal?.aborted) return new RabbitError('INTERRUPTED', 'interrupted', { source, cause: error });
  const code = (error as { code?: string } | null)?.code ?? '';
  const message = redactUrl((error as Error | null)?.message ?? String(error));
  const proxyFailure = proxy ? proxyFailureOf(error, proxy) : undefined;
  const via = proxy ? ` through the proxy ${proxyAddress(proxy)}` : '';
  const data = proxy ? { data: { proxy: proxyAddress(proxy), ...(proxyFailure ? { proxyFailure } : {}) } } : {};
  if (TIMEOUT_CODES.has(code)) {
    return new RabbitError('TIMEOUT', `${method} ${source} timed out${via} (${code})`, {
      source,
      method,
      cause: error,
      ...data,
    });
  }
  const failed = proxyFailure
    ? `failed: ${proxyFailureWords(proxyFailure)}`
    : `failed${via}: ${code ? `${code} ` : ''}${message}`;
  return new RabbitError('NETWORK', `${method} ${source} ${failed}`, { source, method, cause: error, ...data });
}
