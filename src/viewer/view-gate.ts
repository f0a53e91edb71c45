import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The secret between `view` and the one who started it, as Jupyter keeps one: every local user can
 * connect to 127.0.0.1, so the archive (0600 on disk) is served only to requests that show a
 * random token. The URL `view` prints carries it as its first path segment, so every link in the
 * archive's pages, all relative, carries it too; the first request with it also sets an HttpOnly,
 * SameSite=Strict cookie, which admits requests to absolute paths of the server from that browser.
 * Anything else gets 403 and not a byte of the archive.
 */
export interface ViewGate {
  /** The path every URL of the archive starts with: `/<token>/`. */
  prefix: string;
  /**
   * True, with req.url made relative to the server's root, for a request that shows the token; else
   * false once it has been answered 403.
   */
  admit(req: IncomingMessage, res: ServerResponse, port: number): boolean;
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
    admit(req, res, port) {
      const url = req.url ?? '/';
      // Cookies are shared by every port of a host: the name holds this server's port.
      const cookie = `rabbit_view_${port}`;
      const segment = /^\/([^/?#]*)/.exec(url)?.[1];
      if (matches(segment)) {
        res.setHeader('set-cookie', `${cookie}=${token}; Path=/; HttpOnly; SameSite=Strict`);
        req.url = url.slice(prefix.length - 1) || '/';
        return true;
      }
      if (matches(cookieValue(req.headers.cookie, cookie))) return true;
      res
        .writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
        .end('open the address `rabbit-export view` printed: it carries the key to this archive\n');
      return false;
    },
  };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
