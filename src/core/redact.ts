/**
 * The API key travels only in the `api_key` query parameter of outgoing requests; a proxy's
 * credentials only in the user:password part of its URL. Everything that leaves the process
 * (messages, logs, manifest, archive) goes through here.
 */
const KEY_PARAM = /([?&]api_key=)[^&#\s"']*/gi;
const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\//gi;
/**
 * What may follow the `@` that ends a userinfo: a host (name, IPv4, [IPv6]) with an optional port,
 * then the end of the URL.
 */
const HOST_AFTER_AT = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::\d*)?(?=$|[/?#\s"'<>\\),;\]}`])/i;

export function redactUrl(text: string): string {
  return redactUserinfo(text.replace(KEY_PARAM, '$1REDACTED'));
}

/**
 * Replaces the credentials of every URL in the text. A password is often pasted unencoded, so it
 * may hold `/`, `?`, `#`, `@` or spaces, which end the authority in the URL grammar: the userinfo
 * is taken to run from the scheme to the LAST `@` that is followed by a host, on the same line and
 * before the next URL. That may hide more than the credentials (an `@` later in a path); it never
 * shows part of them.
 */
function redactUserinfo(text: string): string {
  const starts = [...text.matchAll(SCHEME)];
  if (starts.length === 0) return text;
  let out = '';
  let copied = 0;
  for (let i = 0; i < starts.length; i++) {
    const match = starts[i] as RegExpExecArray;
    const from = match.index + match[0].length;
    if (from < copied) continue;
    const nextUrl = (starts[i + 1] as RegExpExecArray | undefined)?.index ?? text.length;
    const lineEnd = text.indexOf('\n', from);
    const limit = Math.min(nextUrl, lineEnd === -1 ? text.length : lineEnd);
    const at = lastUserinfoEnd(text, from, limit);
    if (at === -1) continue;
    out += `${text.slice(copied, from)}REDACTED`;
    copied = at;
  }
  return out + text.slice(copied);
}

/** The index of the last `@` in [from, limit) that a host follows, or -1. */
function lastUserinfoEnd(text: string, from: number, limit: number): number {
  for (let at = text.lastIndexOf('@', limit - 1); at >= from; at = text.lastIndexOf('@', at - 1)) {
    if (HOST_AFTER_AT.test(text.slice(at + 1, limit))) return at;
    if (at === 0) break;
  }
  return -1;
}

/** Remove every literal occurrence of the given secrets as well as any api_key parameter. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = redactUrl(text);
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('REDACTED');
  }
  return out;
}

/** Text with the query string cut off every URL or path in it: the manifest records paths, never queries. */
export function withoutQueries(text: string): string {
  return redactUrl(text).replace(/\?[^\s]*/g, '');
}
