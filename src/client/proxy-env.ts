import { BlockList, isIP } from 'node:net';
import { RabbitError } from '../core/errors.js';
import { redactUrl, rememberCredentials } from '../core/redact.js';

/**
 * Which proxy to use, as curl reads it from the environment. The core never reads process.env
 * itself: the CLI turns its environment into these settings (proxySettingsFromEnv) and passes them.
 */
export interface ProxySettings {
  /** Proxy for http:// origins. */
  httpProxy?: string;
  /** Proxy for https:// origins. */
  httpsProxy?: string;
  /** Hosts reached directly: comma or space separated names, domains, IPs, CIDR ranges, or `*`. */
  noProxy?: string;
}

/**
 * curl's reading: the lowercase name wins over the uppercase one, https:// origins use
 * HTTPS_PROXY and http:// origins HTTP_PROXY, ALL_PROXY is the fallback for both. An empty value
 * counts as unset. (Unlike undici's EnvHttpProxyAgent, an HTTP_PROXY alone does not carry https
 * traffic: curl does not do that either.)
 */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv): ProxySettings {
  const read = (name: string): string | undefined => {
    const value = env[name.toLowerCase()] || env[name.toUpperCase()];
    return value ? value.trim() || undefined : undefined;
  };
  // Their credentials are hidden from every message from now on, whatever characters they hold.
  for (const name of ['all_proxy', 'http_proxy', 'https_proxy']) {
    const value = read(name);
    if (value !== undefined) rememberCredentials(value);
  }
  const all = read('all_proxy');
  const httpProxy = read('http_proxy') ?? all;
  const httpsProxy = read('https_proxy') ?? all;
  const noProxy = read('no_proxy');
  return {
    ...(httpProxy ? { httpProxy } : {}),
    ...(httpsProxy ? { httpsProxy } : {}),
    ...(noProxy ? { noProxy } : {}),
  };
}

/** The proxy URL to reach `origin` through, or undefined to connect directly. */
export function proxyFor(origin: URL, settings: ProxySettings | undefined): URL | undefined {
  if (!settings) return undefined;
  const raw = origin.protocol === 'https:' ? settings.httpsProxy : settings.httpProxy;
  if (!raw) return undefined;
  if (bypassesProxy(origin, settings.noProxy ?? '')) return undefined;
  return parseProxyUrl(raw, origin.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY');
}

/** A proxy URL as curl takes it: without a scheme it is http://. Only http and https proxies. */
export function parseProxyUrl(raw: string, name: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new RabbitError('USAGE', `${name} ${JSON.stringify(redactUrl(withScheme))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RabbitError('USAGE', `${name} must be an http:// or https:// proxy, not ${url.protocol}`);
  }
  return url;
}

/**
 * NO_PROXY as curl matches it: `*` alone bypasses every host; a name matches itself and its
 * subdomains (a leading dot or `*.` is ignored); an IP address or CIDR range matches addresses in
 * it. An entry may name a port (`host:8443`), matching only that port.
 */
export function bypassesProxy(origin: URL, noProxy: string): boolean {
  const host = origin.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const { name, entryPort } = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    if (name.includes('/')) {
      if (inCidr(host, name)) return true;
      continue;
    }
    const bare = name.replace(/^\*?\./, '');
    if (bare === '') continue;
    if (host === bare || (isIP(host) === 0 && host.endsWith(`.${bare}`))) return true;
  }
  return false;
}

function splitPort(entry: string): { name: string; entryPort?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] as string, ...(bracketed[2] ? { entryPort: Number(bracketed[2]) } : {}) };
  // A bare IPv6 address has colons of its own and no port.
  if (isIP(entry.split('/')[0] ?? '') === 6) return { name: entry };
  const match = /^(.*):(\d+)$/.exec(entry);
  return match ? { name: match[1] as string, entryPort: Number(match[2]) } : { name: entry };
}

function inCidr(host: string, cidr: string): boolean {
  const [network = '', bitsText = ''] = cidr.split('/');
  const family = isIP(network);
  const bits = Number(bitsText);
  if (family === 0 || isIP(host) !== family || !/^\d+$/.test(bitsText)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits > (family === 4 ? 32 : 128)) return false;
  const list = new BlockList();
  list.addSubnet(network, bits, type);
  return list.check(host, type);
}
