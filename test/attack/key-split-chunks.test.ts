import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import { fetchResource } from '../../src/crawl/fetch-resource.js';
import { tempDir } from '../helpers/temp.js';
import { testFetchContext } from '../crawl/fetch-context.js';

// A service that sends a body in pieces cut inside the key, at every offset of it, each piece
// flushed on its own: what the crawl stores holds the marker, never a piece of the key that
// escaped the scan because the rest of it had not come yet.

const KEY = 'd411e757da3c9f0db8204e3accc48fbfe1800269';
const hex = (c: string) => c.charCodeAt(0).toString(16);
const FORMS: [string, Buffer, Buffer][] = [
  ['as is', Buffer.from(`<p>${KEY}</p>`), Buffer.from(`<p>${KEY_MARKER}</p>`)],
  [
    'percent-encoded',
    Buffer.from(`/x?k=${[...KEY].map((c) => `%${hex(c)}`).join('')}&y`),
    Buffer.from(`/x?k=${KEY_MARKER}&y`),
  ],
  ['UTF-16', Buffer.from(`\ufeff"${KEY}"`, 'utf16le'), Buffer.from(`\ufeff"${KEY_MARKER}"`, 'utf16le')],
];

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves `body` cut at `cut` (from the query), the two pieces written apart with the socket flushed between. */
async function serveInPieces(body: Buffer): Promise<string> {
  server = createServer((req, res) => {
    const cut = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('cut'));
    req.socket.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': body.length });
    // The rest goes out two turns of the event loop after the first piece is on the socket, so
    // the client (in this process) has had a poll phase between to read the first piece alone,
    // however loaded the machine, and no timer is waited for.
    res.write(body.subarray(0, cut), () => setImmediate(() => setImmediate(() => res.end(body.subarray(cut)))));
  });
  await new Promise<void>((resolve) => (server as Server).listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${((server as Server).address() as AddressInfo).port}`;
}

describe('a key cut across the chunks a body arrives in', () => {
  it.each(FORMS)('%s: stored with the marker, at every cut', async (_name, body, expected) => {
    const baseUrl = await serveInPieces(body);
    const dir = await tempDir();
    const { ctx, close } = await testFetchContext(baseUrl, join(dir, 'spool'), {
      secrets: SecretMarker.of([KEY]) as SecretMarker,
    });
    try {
      for (let cut = 1; cut < body.length; cut++) {
        const result = await fetchResource(ctx, { source: `/x?cut=${cut}`, key: KEY, maxBytes: 1 << 20, keep: true });
        if (result.status !== 200) throw new Error(`answered ${result.status}`);
        expect(result.body.buffer?.equals(expected), `cut at ${cut}`).toBe(true);
        expect(result.keyRedactions).toBe(1);
      }
    } finally {
      await close();
    }
  });
});
