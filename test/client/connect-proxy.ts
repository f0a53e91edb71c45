import { createServer, request as httpRequest, type IncomingMessage, type RequestListener } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface TestProxy {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** CONNECT tunnels opened, by target as asked (`rabbit.test:443`). */
  tunnels: string[];
  /** Plain (absolute-form) requests forwarded. */
  plain: string[];
  /** Local ports of the proxy's own connections onward: whoever the target saw come in. */
  upstreamPorts: Set<number>;
  /** Proxy-Authorization headers seen, in order. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

export interface TestProxyOptions {
  /** Names the proxy resolves, e.g. { 'rabbit.test': 41235 }: a loopback port for each. */
  hosts?: Record<string, number>;
  /** `user:password` the proxy insists on (407 otherwise). */
  credentials?: string;
  /** Key and certificate: an https:// proxy (TLS between client and proxy). */
  tls?: { key: Buffer; cert: Buffer };
}

/**
 * A real forward proxy on loopback, as a company network has one: CONNECT tunnels for https and
 * absolute-form requests for plain http. It resolves only the names it is given (to 127.0.0.1) and
 * 127.0.0.1 itself, so a request for `rabbit.test` that does not go through it cannot succeed.
 */
export async function startConnectProxy(options: TestProxyOptions = {}): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const proxy: Omit<TestProxy, 'url' | 'close'> = {
    tunnels: [],
    plain: [],
    upstreamPorts: new Set(),
    authorizations: [],
  };
  const expected = options.credentials ? `Basic ${Buffer.from(options.credentials).toString('base64')}` : undefined;
  const portOf = (host: string, port: number): number | undefined => {
    if (host === '127.0.0.1') return port;
    return options.hosts?.[host.toLowerCase()];
  };
  const authorized = (req: IncomingMessage): boolean => {
    const given = req.headers['proxy-authorization'];
    proxy.authorizations.push(given);
    return expected === undefined || given === expected;
  };
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  };

  const listener: RequestListener = (req, res) => {
    proxy.plain.push(req.url ?? '');
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url ?? '/');
    const port = portOf(target.hostname, Number(target.port) || 80);
    if (port === undefined) {
      res.writeHead(502).end();
      return;
    }
    const onward = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: `${target.pathname}${target.search}`, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    onward.on('socket', (socket) => socket.once('connect', () => proxy.upstreamPorts.add(socket.localPort ?? 0)));
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  };
  const server = options.tls ? createTlsServer(options.tls, listener) : createServer(listener);
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    proxy.tunnels.push(req.url ?? '');
    if (!authorized(req)) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    const match = /^(.+):(\d+)$/.exec(req.url ?? '');
    const port = match ? portOf(match[1] as string, Number(match[2])) : undefined;
    if (port === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = track(connect(port, '127.0.0.1'));
    upstream.once('connect', () => {
      proxy.upstreamPorts.add(upstream.localPort ?? 0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...proxy,
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
