import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Ping {
  path: string;
  body: string;
}

export interface PingListener {
  /** `http://127.0.0.1:PORT`, with no path. */
  base: string;
  /** Every ping received so far, in order. */
  pings: Ping[];
  close(): Promise<void>;
}

/** A healthchecks.io stand-in on loopback that answers OK and keeps each ping's path and body. */
export async function startPingListener(): Promise<PingListener> {
  const pings: Ping[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      pings.push({ path: request.url ?? '', body });
      response.writeHead(200).end('OK');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pings,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
