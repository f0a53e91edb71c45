import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

// A front to the fake service that writes the run's API keys into what it answers, in the
// encodings a service or a page may use: pages, page and element JSON, stylesheets, a large PNG,
// links to other hosts, and error answers. For tests that the key is nowhere in the archive.

export const FOREIGN_WITH_KEY = 'https://cdn.example.org/x.png';

const code = (c: string): number => c.charCodeAt(0);
const each = (key: string, f: (c: string) => string): string => [...key].map(f).join('');

/**
 * The characters of the base64 (or base64url) of a text that hold bits of `key` alone, when the
 * key starts `alignment` bytes into a group of three: whatever text is around the key, its base64
 * holds this run.
 */
function base64Run(key: string, alignment: number, encoding: 'base64' | 'base64url'): string {
  const encoded = Buffer.concat([Buffer.alloc(alignment), Buffer.from(key)]).toString(encoding);
  return encoded.slice(Math.ceil((8 * alignment) / 6), Math.floor((8 * (alignment + key.length)) / 6));
}

/** A text holding `key`, base64-encoded as the front writes it into a page's `data:` URI. */
export const dataUriText = (key: string): string => `{"token":"${key}"}`;

/** Every way the front writes a key, and so every way a test looks for it. */
export function keyEncodings(key: string) {
  return {
    raw: key,
    percentUpper: each(key, (c) => `%${code(c).toString(16).toUpperCase()}`),
    percentLower: each(key, (c) => `%${code(c).toString(16)}`),
    jsonEscaped: each(key, (c) => `\\u${code(c).toString(16).padStart(4, '0')}`),
    htmlDecimal: each(key, (c) => `&#${code(c)};`),
    htmlHex: each(key, (c) => `&#x${code(c).toString(16)};`),
    cssEscaped: each(key, (c) => `\\${code(c).toString(16)} `),
    // In the base64 of any text, the key starting at any of the three places in a group of bytes.
    base64At0: base64Run(key, 0, 'base64'),
    base64At1: base64Run(key, 1, 'base64'),
    base64At2: base64Run(key, 2, 'base64'),
    base64urlAt0: base64Run(key, 0, 'base64url'),
    base64urlAt1: base64Run(key, 1, 'base64url'),
    base64urlAt2: base64Run(key, 2, 'base64url'),
  };
}

export interface HostileFront {
  baseUrl: string;
  close(): Promise<void>;
}

/** Starts the front on 127.0.0.1 port 0; every request goes on to `upstream` and its answer is spiked with `keys`. */
export async function startHostileFront(upstream: string, keys: readonly string[]): Promise<HostileFront> {
  const server: Server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', upstream);
    const forward: Record<string, string> = { 'accept-encoding': 'identity' };
    if (req.headers['if-modified-since']) forward['if-modified-since'] = req.headers['if-modified-since'];
    // undici's request, not node:http's: nock (test/helpers/no-network.ts) sees every node:http
    // request, and its interceptor made each of the front's hundreds dearer than the answer itself.
    request(target, { headers: forward })
      .then(async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer());
        const spiked = spike(target.pathname, answer.statusCode, body, keys);
        const headers: Record<string, string | number> = { 'content-length': spiked.body.length };
        for (const name of ['content-type', 'last-modified']) {
          const value = answer.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        if (spiked.status !== 200 && spiked.status !== 304) headers['x-debug-key'] = keys[0] ?? '';
        res.writeHead(spiked.status, headers);
        res.end(spiked.body);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function spike(path: string, status: number, body: Buffer, keys: readonly string[]): { status: number; body: Buffer } {
  if (status !== 200) return { status, body };
  const all = keys.map(keyEncodings);
  const text = body.toString('latin1');
  if (/\/pages\/[^/]+\.html$/.test(path)) {
    const extra = all
      .map(
        (k) =>
          `<a href="/rabbit/api/prototypes.json?api_key=${k.raw}">own</a>` +
          `<img src="${FOREIGN_WITH_KEY}?api_key=${k.raw}" alt="" />` +
          `<img src="https://cdn.example.org/${k.percentUpper}/y.png?t=${k.percentLower}" alt="" />` +
          `<p>${k.raw} ${k.htmlDecimal} ${k.htmlHex}</p>`,
      )
      .join('');
    // And in the base64 of a text in a data: URI, the key 10 bytes in.
    const uris = keys
      .map(
        (key) =>
          `<img src="data:application/json;base64,${Buffer.from(dataUriText(key)).toString('base64')}" alt="" />`,
      )
      .join('');
    return { status, body: Buffer.from(text.replace('</body>', `${extra}${uris}</body>`), 'latin1') };
  }
  if (/\/discussions\.json$/.test(path) && /prototypes\/\d+\/discussions/.test(path)) {
    // An error answer whose body and headers hold the key.
    return { status: 403, body: Buffer.from(`{"error":"key ${keys[0]} may not read this"}`) };
  }
  if (/\/elements\/[^/]+\.json$/.test(path) && text.endsWith('}')) {
    const base64 = (text: string, encoding: 'base64' | 'base64url') => Buffer.from(text).toString(encoding);
    // The key in base64 too: 8 bytes into the text of one field, the whole text of the other.
    const extra = keys
      .map(
        (key, i) =>
          `,"text${i}":"label ${key}","escaped${i}":"${keyEncodings(key).jsonEscaped}"` +
          `,"blob${i}":"${base64(`api_key=${key}`, 'base64')}","token${i}":"${base64(key, 'base64url')}"`,
      )
      .join('');
    return { status, body: Buffer.from(`${text.slice(0, -1)}${extra}}`, 'latin1') };
  }
  if (/\/pages\/[^/]+\.json$/.test(path) && text.endsWith('}')) {
    const extra = all.map((k, i) => `,"url${i}":"https:\\/\\/x.example\\/?api_key=${k.percentLower}"`).join('');
    return { status, body: Buffer.from(`${text.slice(0, -1)}${extra}}`, 'latin1') };
  }
  if (/\/pages\/[^/]+\.png$/.test(path)) {
    // Every page's PNG carries the keys. Prototype 17's three, early in every crawl, are padded past
    // the spool's in-memory size: the keys reach it in bodies streamed to files of their own. The
    // others carry them in a small body: padding all sixteen made every archive 20 MB, and each
    // run, convert and extraction of it that much dearer, for no case those three do not make.
    const filler = /\/prototypes\/17\/pages\//.test(path) ? Buffer.alloc(300 * 1024 + 7, 0x20) : Buffer.from(' ');
    const tail = all.map((k) => Buffer.concat([filler, Buffer.from(k.raw), filler, Buffer.from(k.percentUpper)]));
    return { status, body: Buffer.concat([body, ...tail]) };
  }
  if (path.endsWith('.css')) {
    const extra = all.map((k) => `\n/* ${k.raw} */ .k::after { content: "${k.cssEscaped}"; }`).join('');
    return { status, body: Buffer.concat([body, Buffer.from(extra)]) };
  }
  return { status, body };
}
