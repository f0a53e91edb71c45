import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { startPingListener, type Ping, type PingListener } from '../helpers/ping-listener.js';
import { join } from 'node:path';

let pings: Ping[];
let monitor: PingListener;
let monitorBase: string;
beforeEach(async () => {
  monitor = await startPingListener();
  pings = monitor.pings;
  monitorBase = monitor.base;
});
afterEach(() => monitor.close());

describe('a password pasted into --base-url', () => {
  const password = 'p/a#s?s@w%rd: x y';

  it.each([
    [`http://us%er:${password}@127.0.0.1:1`, false],
    [`us%er:${password}@127.0.0.1:1`, true],
  ])('appears nowhere in %s: not stderr, the --json line, the advice or the failure ping', async (baseUrl, advised) => {
    const run = await runCli(['export', '--base-url', baseUrl, '--out', join(await tempDir(), 'a.zip'), '--json'], {
      register: registerExport,
      env: { RABBIT_API_KEY: 'k-not-used', RABBIT_HEALTHCHECK_URL: `${monitorBase}/ping/abc` },
    });
    expect(run.code).toBe(2);
    const line = JSON.parse(run.stdout) as { error: { code: string; suggestion?: string; next: string } };
    expect(line.error.code).toBe('BAD_BASE_URL');
    // A URL that has its scheme is not told to add one.
    expect(line.error.next.includes('https://http')).toBe(false);
    expect(line.error.suggestion !== undefined).toBe(advised);
    const failure = pings.find((ping) => ping.path === `/ping/abc/${run.code}`)?.body ?? '';
    expect(JSON.parse(failure)).toEqual(JSON.parse(run.stdout));
    for (const text of [run.stdout, run.stderr, failure]) {
      for (const piece of ['p/a', 's?s', 'w%rd', 'rd: x', 'x y', 'us%er'])
        expect([piece, text.includes(piece)]).toEqual([piece, false]);
    }
  });
});
