import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { keyEncodings } from './hostile-front.js';

// A front to the fake service that echoes the key of each request in every part of its answer a
// client may keep: the reason phrase, Content-Type, Last-Modified, ETag, Content-Disposition, Link,
// a header of its own, the Location of a redirect (every answer is first a redirect to itself with
// the key in the query; a page's image, to another origin), and the body of the error answers it makes of some resources. Each in an
// encoding of its own, as a careless service would write them. For tests that no value kept from
// the service holds a key.

export interface EchoFront {
  baseUrl: string;
  /** How many answers carried an echoed key in their headers. */
  echoed: number;
  close(): Promise<void>;
}

/** Starts the front on 127.0.0.1 port 0; every request goes on to `upstream`. */
export async function startEchoFront(upstream: string): Promise<EchoFront> {
  const front: EchoFront = { baseUrl: '', echoed: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const asked = new URL(req.url ?? '/', 'http://front.invalid');
    const key = asked.searchParams.get('api_key') ?? '';
    const k = keyEncodings(key);
    if (key !== '' && /\/pages\/[^/]+\.png$/.test(asked.pathname)) {
      // To another origin, which the client refuses and records, quoting the Location.
      front.echoed++;
      res.writeHead(302, { location: `http://elsewhere.invalid/${k.percentUpper}/${k.raw}/shot.png` });
      res.end();
      return;
    }
    if (key !== '' && asked.searchParams.get('hop') === null) {
      // To itself, the key in the query (raw, then percent-encoded): a client that follows it sends them back.
      front.echoed++;
      res.writeHead(302, `Found ${k.raw}`, {
        location: `${asked.pathname}?hop=1&echo=${k.raw}&again=${k.percentUpper}`,
        'x-echo-key': k.raw,
        'content-length': 0,
      });
      res.end();
      return;
    }
    const target = new URL(asked.pathname, upstream);
    if (key !== '') target.searchParams.set('api_key', key);
    const forward = { 'accept-encoding': 'identity', ...pick(req.headers, 'if-modified-since') };
    // undici's request, not node:http's: nock (test/helpers/no-network.ts) sees every node:http
    // request, and its interceptor made each of the front's hundreds dearer than the answer itself.
    request(target, { headers: forward })
      .then(async (answer) => {
        let status = answer.statusCode;
        let body = Buffer.from(await answer.body.arrayBuffer());
        // An error answer of its own for some resources, quoting the key.
        if (status === 200 && /\/discussions\.json$/.test(asked.pathname) && key !== '') {
          status = 403;
          body = Buffer.from(`{"error":"key ${k.raw} (${k.jsonEscaped}) may not read this"}`);
        }
        const headers: Record<string, string | number> = { 'content-length': body.length };
        const kept = (name: string): string | undefined => {
          const value = answer.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        if (key !== '') {
          front.echoed++;
          const type = kept('content-type') ?? 'application/octet-stream';
          headers['content-type'] = `${type}; echo=${k.raw}`;
          headers['last-modified'] = `${kept('last-modified') ?? ''} ${k.percentLower}`.trim();
          headers['etag'] = `"${k.htmlHex}"`;
          headers['content-disposition'] = `inline; filename="${k.cssEscaped.trim()}"`;
          headers['link'] = `</x?api_key=${k.raw}>; rel="next"`;
          headers['x-echo-key'] = k.raw;
        } else {
          for (const name of ['content-type', 'last-modified']) {
            const value = kept(name);
            if (value) headers[name] = value;
          }
        }
        res.writeHead(status, key === '' ? undefined : `Echo ${k.raw}`, headers);
        res.end(body);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  front.baseUrl = `http://127.0.0.1:${port}`;
  front.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return front;
}

function pick(headers: Record<string, string | string[] | undefined>, name: string): Record<string, string> {
  const value = headers[name];
  return typeof value === 'string' ? { [name]: value } : {};
}
