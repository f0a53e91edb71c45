import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { restorePrototype } from '../../src/restore/restore-prototype.js';
import { useFakeService } from '../helpers/fake-service.js';
import { damage, exportPrototype, restoreOptions } from '../restore/restore-helpers.js';

let service: FakeService;
let dir: string;
let archive: string;
const servers: Server[] = [];

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  archive = await exportPrototype(service, dir, 'night.zip');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('restore writes answered with a redirect', () => {
  it('a POST redirected to another origin is not followed there: the key stays home, and the create is reported failed', async () => {
    const seen: string[] = [];
    const trap = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(201, { location: `${req.url}/elements/element999.json` }).end();
    });
    const upstream = new URL(service.baseUrl);
    // In front of the service: every request goes through, but a POST is sent on to the trap.
    const front = await listen((req, res) => {
      if (req.method === 'POST') {
        res.writeHead(307, { location: `${trap}${req.url}` }).end();
        return;
      }
      const forward = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
    });
    damage(service);
    const report = await restorePrototype(
      restoreOptions(service, archive, {
        baseUrl: `${front}${upstream.pathname === '/' ? '' : upstream.pathname}`,
        sleep: async (_ms, signal) => signal.throwIfAborted(),
      }),
    );
    expect(seen).toEqual([]);
    expect(report.done.create).toBe(0);
    expect(report.failed.filter((failure) => failure.op === 'create').map((failure) => failure.status)).toEqual([
      307, 307, 307, 307,
    ]);
    expect(JSON.stringify(report)).not.toContain(service.keys.readWrite);
  });
});
