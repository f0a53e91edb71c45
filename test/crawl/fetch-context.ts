import { HttpClient } from '../../src/client/http-client.js';
import { RETRY_DEFAULTS } from '../../src/client/retry-policy.js';
import type { FetchContext } from '../../src/crawl/fetch-resource.js';
import { Spool } from '../../src/storage/spool.js';

/**
 * A fetch context for one test: a client of its own for `baseUrl`, a spool in `spoolDir`, the
 * default retry policy, a fixed jitter, a clock at 0 and backoffs that take no time. `more` adds to
 * it or replaces any of it (a sleep that records its waits, the keys to redact). `close` ends the
 * client and the spool.
 */
export async function testFetchContext(
  baseUrl: string,
  spoolDir: string,
  more: Partial<FetchContext> = {},
): Promise<{ ctx: FetchContext; close: () => Promise<void> }> {
  const client = new HttpClient({ baseUrl, connections: 2, timeoutMs: 30_000 });
  const spool = new Spool(spoolDir);
  await spool.init();
  const ctx: FetchContext = {
    client,
    spool,
    retry: { ...RETRY_DEFAULTS },
    signal: new AbortController().signal,
    random: () => 0.5,
    now: () => 0,
    sleep: () => Promise.resolve(),
    ...more,
  };
  const close = async (): Promise<void> => {
    await client.close();
    await spool.close();
  };
  return { ctx, close };
}
