import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The secret between `view` and the one who started it, as Jupyter keeps one: every local user can
 * connect to 127.0.0.1, so the archive (0600 on disk) is served only to requests that show a
 * random token. The URL `view` prints carries it as its first path segment, so every link in the
 * archive's pages, all relative, carries it too, and the search box asks under the same prefix.
 *
 * The path is the only place it is accepted. A cookie would not do: browsers send a host's cookies
 * to every port of it (cookies do not separate ports, and another port is the same site, so
 * SameSite does not help), so a page served on any other port of 127.0.0.1, or the server behind
 * it, would be handed the key. A path is sent only to this origin, and no other origin can read
 * it: the pages send no Referer (view-policy.ts). Anything without it gets 403 and not a byte of
 * the archive, whatever cookies or headers come with it.
 */
export interface ViewGate {
  /** The path every URL of the archive starts with: `/<token>/`. */
  prefix: string;
  /**
   * True, with req.url made relative to the server's root, for a request whose path starts with
   * the token; else false once it has been answered 403.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
}

const TOKEN_BYTES = 32;

export function createViewGate(token: string = randomBytes(TOKEN_BYTES).toString('base64url')): ViewGate {
  const prefix = `/${token}/`;
  const expected = Buffer.from(token);
  const matches = (given: string | undefined): boolean => {
    if (given === undefined) return false;
    const candidate = Buffer.from(given);
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  };
  return {
    prefix,
    admit(req, res) {
      const url = req.url ?? '/';
      const segment = /^\/([^/?#]*)/.exec(url)?.[1];
      if (matches(segment)) {
        req.url = url.slice(prefix.length - 1) || '/';
        return true;
      }
      res
        .writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
        .end('open the address `rabbit-export view` printed: it carries the key to this archive\n');
      return false;
    },
  };
}
