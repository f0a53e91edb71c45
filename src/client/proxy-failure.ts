import type { RabbitError } from '../core/errors.js';

/**
 * Whose fault a failure through a proxy was. Every connection goes through a CONNECT tunnel, so
 * this process opens TCP connections (and resolves names) for the proxy alone: a refused or
 * unreachable connection, or a host name not found, is the proxy's, and so is any answer to
 * CONNECT but 200. Once the tunnel stands, a failure may be either's and stays the service's.
 */
export type ProxyTrouble = 'refused' | 'not-found' | 'unreachable' | 'status';

export interface ProxyFailure {
  /** The proxy as host:port: its URL may hold user:password, which never goes into a message. */
  proxy: string;
  trouble: ProxyTrouble;
  /** The proxy's answer to CONNECT, for `status`. */
  status?: number;
  /** Whether the proxy URL carries credentials: a 407 then means wrong ones, not missing ones. */
  withCredentials: boolean;
}

const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);

// undici's ProxyAgent says a non-200 answer to CONNECT only in words: "Proxy response (407) !== 200
// when HTTP Tunneling". test/cli/error-guide.test.ts meets it with a real proxy, so a change of
// wording in an undici release fails a test instead of blaming the service again.
const CONNECT_STATUS = /\bProxy response \((\d{3})\)/;

/** The proxy as a message may name it: host and port, the scheme's port when the URL has none. */
export function proxyAddress(proxy: URL): string {
  return `${proxy.hostname}:${proxy.port || (proxy.protocol === 'https:' ? '443' : '80')}`;
}

/** The proxy's part in `error`, a failure of a request sent through `proxy`; undefined if none is certain. */
export function proxyFailureOf(error: unknown, proxy: URL): ProxyFailure | undefined {
  const trouble = troubleOf(error);
  if (trouble === undefined) return undefined;
  return { proxy: proxyAddress(proxy), withCredentials: proxy.username !== '' || proxy.password !== '', ...trouble };
}

function troubleOf(error: unknown): Pick<ProxyFailure, 'trouble' | 'status'> | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return { trouble: 'refused' };
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { trouble: 'not-found' };
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return { trouble: 'unreachable' };
    const status = CONNECT_STATUS.exec(cause.message)?.[1];
    if (status !== undefined) return { trouble: 'status', status: Number(status) };
  }
  return undefined;
}

const TROUBLES: ReadonlySet<unknown> = new Set<ProxyTrouble>(['refused', 'not-found', 'unreachable', 'status']);

/**
 * What a failed request's error (made by toNetworkError) says of the proxy it went through: its
 * host:port, and its failure when the failure was surely the proxy's. Undefined without a proxy.
 */
export function proxyNoteOf(error: RabbitError): { proxy: string; failure?: ProxyFailure } | undefined {
  const proxy = error.data?.['proxy'];
  if (typeof proxy !== 'string') return undefined;
  const failure = error.data?.['proxyFailure'] as Partial<ProxyFailure> | undefined;
  return TROUBLES.has(failure?.trouble) ? { proxy, failure: failure as ProxyFailure } : { proxy };
}

/** What happened, in words, naming the proxy by host:port. */
export function proxyFailureWords(failure: ProxyFailure): string {
  const proxy = `the proxy ${failure.proxy}`;
  switch (failure.trouble) {
    case 'refused':
      return `${proxy} refused the connection: nothing listens there`;
    case 'not-found':
      return `${proxy} cannot be found: its host name is not known`;
    case 'unreachable':
      return `${proxy} cannot be reached from this machine`;
    case 'status':
      if (failure.status !== 407) return `${proxy} answered ${failure.status} to CONNECT: no tunnel to the service`;
      return failure.withCredentials
        ? `${proxy} answered 407 to CONNECT: it did not accept the credentials in its URL`
        : `${proxy} answered 407 to CONNECT: it asks for credentials, and its URL has none`;
  }
}
