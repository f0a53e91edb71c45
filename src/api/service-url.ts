/**
 * Whether two base URLs name the same service, so a respelled URL still reuses its archives:
 * `https://Example.com:443/` and `https://example.com` do. Scheme and host compare without case, a port that is the scheme's
 * default is dropped, and trailing slashes of the path do not count; the path itself keeps its
 * case, as servers may treat it so. A different host (127.0.0.1 and localhost included) or port is
 * another service: its ids may mean other things.
 */
export function normalizeServiceUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    // Not a URL at all: compared as written, which only equals itself.
    return baseUrl.trim().replace(/\/+$/, '');
  }
  // URL already lowercases scheme and host and drops a default port.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

export function isSameService(a: string, b: string): boolean {
  return normalizeServiceUrl(a) === normalizeServiceUrl(b);
}
