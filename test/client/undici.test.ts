import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type * as Undici from 'undici';
import { Pool, ProxyAgent } from '../../src/client/undici.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * src/client/undici.ts loads undici's pool and proxy agent by file, without the package's index.
 * An undici version that moves or changes those files must fail here, not at a user's first export.
 */
describe("undici's dispatchers without its index", () => {
  it('are the classes the index exports, with the same request method', () => {
    const undici = createRequire(import.meta.url)('undici') as typeof Undici;
    expect(Pool).toBe(undici.Pool);
    expect(ProxyAgent).toBe(undici.ProxyAgent);
    expect(Object.getPrototypeOf(Pool.prototype)).toBeInstanceOf(undici.Dispatcher);
    expect(Pool.prototype.request).toBe(undici.Dispatcher.prototype.request);
    expect(ProxyAgent.prototype.request).toBe(undici.Dispatcher.prototype.request);
  });

  it('can send a request in a process that never loads the index', () => {
    // A fresh node running the built module alone: the request method must be there without the index.
    const script = `
      const { Pool, ProxyAgent } = await import('./dist/client/undici.js');
      const { createServer } = await import('node:http');
      const { createRequire } = await import('node:module');
      const server = createServer((req, res) => res.end('ok ' + req.url)).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const pool = new Pool('http://127.0.0.1:' + server.address().port, { connections: 1 });
      const { statusCode, body } = await pool.request({ path: '/x', method: 'GET' });
      const text = await body.text();
      await pool.close();
      server.close();
      const loaded = Object.keys(createRequire(process.cwd() + '/').cache).filter((p) => p.includes('/node_modules/undici/'));
      console.log(JSON.stringify({ statusCode, text, proxy: typeof ProxyAgent.prototype.request, index: loaded.some((p) => p.endsWith('/node_modules/undici/index.js')) }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ statusCode: 200, text: 'ok /x', proxy: 'function', index: false });
  });
});
