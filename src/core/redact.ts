/**
 * The API key travels only in the `api_key` query parameter of outgoing requests; a proxy's
 * credentials only in the user:password part of its URL. Everything that leaves the process
 * (messages, logs, manifest, archive) goes through here.
 */
import { SecretMarker } from './secret-marker.js';

const KEY_PARAM = /([?&]api_key=)[^&#\s"']*/gi;
const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\//gi;
/**
 * What may follow the `@` that ends a userinfo: a host (name, IPv4, [IPv6]) with an optional port,
 * then the end of the URL.
 */
const HOST_AFTER_AT = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::\d*)?(?=$|[/?#\s"'<>\\),;\]}`])/i;

/**
 * Credentials the process was given inside URLs (a proxy's user:password from HTTPS_PROXY and
 * friends), remembered as written and percent-decoded: taken from one whole URL they are exact,
 * and are then hidden wherever they appear, however the text around them reads.
 */
const knownCredentials = new Set<string>();

/** Remembers the userinfo of `url`, a whole URL as the user wrote it: everything before its last `@`. */
export function rememberCredentials(url: string): void {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length ?? 0;
  const at = url.lastIndexOf('@');
  if (at <= scheme) return;
  const userinfo = url.slice(scheme, at);
  const colon = userinfo.indexOf(':');
  // The whole userinfo, and the password alone (a user name alone may be any word of a message).
  const forms = colon === -1 ? [userinfo] : [userinfo, userinfo.slice(colon + 1)];
  const decoded = forms.map(safeDecode);
  // As written, decoded, and encoded as a URL serializer would write it back.
  for (const form of [...forms, ...decoded, ...decoded.map(encodeURIComponent)])
    if (form.length >= 4) knownCredentials.add(form);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function redactUrl(text: string): string {
  let out = redactUserinfo(text.replace(KEY_PARAM, '$1REDACTED'));
  // Longest first, so a password is not half-hidden by a shorter credential inside it.
  for (const secret of [...knownCredentials].sort((a, b) => b.length - a.length))
    if (out.includes(secret)) out = out.split(secret).join('REDACTED');
  return out;
}

/**
 * Replaces the credentials of every URL in the text. A password is often pasted unencoded, so it
 * may hold `/`, `?`, `#`, `@` or spaces, which end the authority in the URL grammar. Where the
 * authority so ended holds an `@`, or is no host[:port] at all (`user:p` of `http://user:p/a@host`),
 * or is followed at once by `?` or `#` (`http://us#er:pw@host`),
 * the userinfo is taken to run to the LAST `@` that a host follows, on the same line and before
 * the next URL: that may hide more than the credentials, never part of them. An authority that is
 * a plain host (`cdn.example` of `https://cdn.example/npm/@scope/x@1`) has none.
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
    const authority = /^[^/?#\s]*/.exec(text.slice(from))?.[0] ?? '';
    // A plain host followed by a path has no credentials; one followed at once by `?` or `#` may be
    // a user name cut short by a password's character.
    const next = text[from + authority.length];
    if (!authority.includes('@') && PLAIN_AUTHORITY.test(authority) && next !== '?' && next !== '#') continue;
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

/** An authority without userinfo: a host name, IPv4 or [IPv6] address, and an optional numeric port. */
const PLAIN_AUTHORITY = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::\d*)?$/i;

/** The index of the last `@` in [from, limit) that a host follows, or -1. */
function lastUserinfoEnd(text: string, from: number, limit: number): number {
  for (let at = text.lastIndexOf('@', limit - 1); at >= from; at = text.lastIndexOf('@', at - 1)) {
    if (HOST_AFTER_AT.test(text.slice(at + 1, limit))) return at;
    if (at === 0) break;
  }
  return -1;
}

/**
 * Remove every occurrence of the given secrets, written as is or in any encoding the body scan
 * knows (a message may quote a Location or a header a service echoed a key in), as well as any
 * api_key parameter.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = redactUrl(text);
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('REDACTED');
  }
  return markerOf(secrets)?.redactText(out) ?? out;
}

/** Every string in `value`, however deep in its arrays and objects, through `redact`; the rest as it is. */
export function redactStrings(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((inner) => redactStrings(inner, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactStrings(inner, redact)]));
  return value;
}

/** The scan for a run's keys, made once: the callers pass the same keys for every message. */
let lastMarker: { keys: string; marker: SecretMarker | undefined } | undefined;
function markerOf(secrets: readonly string[]): SecretMarker | undefined {
  const keys = secrets.join('\n');
  if (lastMarker?.keys !== keys) lastMarker = { keys, marker: SecretMarker.of(secrets) };
  return lastMarker.marker;
}

/** Text with the query string cut off every URL or path in it: the manifest records paths, never queries. */
export function withoutQueries(text: string): string {
  return redactUrl(text).replace(/\?[^\s]*/g, '');
}
