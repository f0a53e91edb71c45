import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService, STATIC_PATHS, type FakeService } from '../../src/fake-service/index.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { manifestOf } from '../helpers/archive.js';
import { tempDir } from '../helpers/temp.js';

// A service reached as http://localhost:P whose pages name it http://127.0.0.1:P (or the reverse,
// or [::1]) is one server: the assets its pages name there are its own and are archived.

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** A port free on 127.0.0.1 right now, for a service that must know its own port before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('loopback names are one origin for page requisites', () => {
  it.each([
    ['localhost', '127.0.0.1'],
    ['127.0.0.1', 'localhost'],
    ['127.0.0.1', '[::1]'],
  ])('exported through http://%s:P, pages naming http://%s:P: the logo is archived', async (through, named) => {
    const port = await freePort();
    service = await startFakeService({ port, advertisedBaseUrl: `http://${named}:${port}` });
    const dir = await tempDir();
    const result = await exportAccount({
      out: join(dir, 'out.zip'),
      baseUrl: `http://${through}:${port}`,
      keys: [service.keys.readOnly],
      concurrency: 4,
    });
    const manifest = await manifestOf(result.out);
    const sources = allFileEntries(manifest).map((entry) => entry.source);
    // The page names the logo absolutely, on the host it calls itself by.
    expect(sources).toContain(STATIC_PATHS.logo);
    expect((manifest.foreignReferences ?? []).filter((ref) => ref.url.includes(`:${port}/`))).toEqual([]);
    expect(manifest.errors).toEqual([]);
    expect(result.complete).toBe(true);
  });
});
