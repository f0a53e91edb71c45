import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { requireTool } from '../helpers/tools.js';

export interface TestCa {
  /** PEM of the CA certificate: what NODE_EXTRA_CA_CERTS names. */
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

/**
 * A private CA made for the test with the openssl CLI, and a server certificate it signed for
 * `hostname` and 127.0.0.1 (the service, and an https:// proxy on loopback). Nothing on the
 * machine trusts it unless told to.
 */
export function makeTestCa(dir: string, hostname: string): TestCa {
  requireTool('openssl');
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=rabbit-export test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${hostname}`);
  writeFileSync(
    join(dir, 'server.ext'),
    `subjectAltName=DNS:${hostname},IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key')),
    cert: readFileSync(join(dir, 'server.pem')),
  };
}

export interface TlsFront {
  port: number;
  /** Remote ports of the TLS connections accepted: who connected. */
  remotePorts: number[];
  close(): Promise<void>;
}

/** TLS in front of a plain loopback server (the fake service), with the test CA's certificate. */
export async function startTlsFront(ca: TestCa, backendPort: number): Promise<TlsFront> {
  const sockets = new Set<Socket>();
  const remotePorts: number[] = [];
  const server = createServer({ key: ca.key, cert: ca.cert }, (socket) => {
    const backend = connect(backendPort, '127.0.0.1');
    for (const s of [socket, backend]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    socket.pipe(backend).pipe(socket);
    backend.on('close', () => socket.destroy());
    socket.on('close', () => backend.destroy());
  });
  server.on('connection', (socket: Socket) => {
    remotePorts.push(socket.remotePort ?? 0);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client that rejects the certificate ends the handshake; that is the test's point, not an error.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    remotePorts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
