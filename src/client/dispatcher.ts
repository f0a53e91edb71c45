import type { Dispatcher } from 'undici';
import { Pool, ProxyAgent } from 'undici';
import { proxyFor, type ProxySettings } from './proxy-env.js';

export interface DispatcherOptions {
  /** The one origin every request goes to, e.g. https://pidoco.com. */
  origin: string;
  /** Keep-alive connections to keep open: the crawl's concurrency. */
  connections: number;
  /** Connect, headers and body-idle timeout in milliseconds. */
  timeoutMs: number;
  /** Proxy settings (from HTTPS_PROXY, HTTP_PROXY, NO_PROXY); none connects directly. */
  proxy?: ProxySettings;
}

/** Idle keep-alive sockets are closed after this; the service closes its own later than that. */
const KEEP_ALIVE_MS = 10_000;

/**
 * The connection pool for the service origin: `connections` keep-alive sockets, directly or
 * through a proxy. Through a proxy every socket is a CONNECT tunnel to the origin (https too, with
 * TLS end to end, so the proxy never sees the key), and the pool behind it has the same size and
 * timeouts as without one. No CA option is set anywhere: Node's default trust store, which
 * includes NODE_EXTRA_CA_CERTS, verifies both the proxy (https://) and the service.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const poolOptions = {
    connections: options.connections,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: KEEP_ALIVE_MS,
    pipelining: 1,
  };
  const proxy = proxyFor(new URL(options.origin), options.proxy);
  if (!proxy) return new Pool(options.origin, { ...poolOptions, connectTimeout: options.timeoutMs });
  // The tunnel replaces the pool's own connector, so the connect timeout goes to both legs:
  // the TCP (and TLS) connection to the proxy, and the TLS handshake with the service inside it.
  const tls = { timeout: options.timeoutMs };
  return new ProxyAgent({
    uri: proxy.href,
    proxyTunnel: true,
    ...poolOptions,
    proxyTls: tls,
    requestTls: tls,
    // The CONNECT requests themselves: one at a time per socket, answered within the timeout.
    clientFactory: (origin, clientOptions) =>
      new Pool(origin, { ...clientOptions, headersTimeout: options.timeoutMs, pipelining: 1 }),
  });
}
