/**
 * The API key travels only in the `api_key` query parameter of outgoing requests; a proxy's
 * credentials only in the user:password part of its URL. Everything that leaves the process
 * (messages, logs, manifest, archive) goes through here.
 */
const KEY_PARAM = /([?&]api_key=)[^&#\s"']*/gi;
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/?#\s"']*@/gi;

export function redactUrl(text: string): string {
  return text.replace(KEY_PARAM, '$1REDACTED').replace(USERINFO, '$1REDACTED@');
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
