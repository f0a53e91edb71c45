import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { abortRelay } from '../../src/client/abort-relay.js';
import { HttpClient, discardBody } from '../../src/client/http-client.js';
import { ResponseBody } from '../../src/client/response-body.js';
import { isRabbitError } from '../../src/core/errors.js';

/** What undici's controller was told: pauses, resumes and aborts, in order. */
function fakeController(): Dispatcher.DispatchController & { told: string[] } {
  const told: string[] = [];
  let paused = false;
  let aborted: Error | null = null;
  return {
    told,
    get aborted() {
      return aborted !== null;
    },
    get paused() {
      return paused;
    },
    get reason() {
      return aborted;
    },
    pause() {
      paused = true;
      told.push('pause');
    },
    resume() {
      paused = false;
      told.push('resume');
    },
    abort(reason: Error) {
      aborted = reason;
      told.push(`abort: ${reason.message}`);
    },
  };
}

const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString();

describe('ResponseBody', () => {
  it('hands over chunks that came before the read, then those after, in order, and ends', async () => {
    const controller = fakeController();
    const body = new ResponseBody(controller);
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    const seen: Buffer[] = [];
    const read = body.read((chunk) => {
      seen.push(chunk);
      return undefined;
    });
    body.push(Buffer.from('c'));
    body.end();
    await read;
    expect(text(seen)).toBe('abc');
    expect(controller.told).toEqual([]);
  });

  it('pauses the transfer while the reader waits, and resumes it after, keeping the order', async () => {
    const controller = fakeController();
    const body = new ResponseBody(controller);
    let release: () => void = () => undefined;
    const seen: string[] = [];
    const read = body.read((chunk) => {
      seen.push(chunk.toString());
      if (chunk.toString() !== 'slow') return undefined;
      return new Promise<void>((resolve) => (release = resolve));
    });
    body.push(Buffer.from('slow'));
    // What undici had parsed already still comes after the pause: it waits its turn.
    body.push(Buffer.from('queued'));
    body.end();
    expect(seen).toEqual(['slow']);
    expect(controller.told).toEqual(['pause']);
    release();
    await read;
    expect(seen).toEqual(['slow', 'queued']);
    expect(controller.told).toEqual(['pause', 'resume']);
  });

  it('stops the transfer with what the reader throws, and ignores what comes after', async () => {
    const controller = fakeController();
    const body = new ResponseBody(controller);
    const tooMuch = new Error('too large');
    const read = body.read(() => {
      throw tooMuch;
    });
    body.push(Buffer.from('x'));
    await expect(read).rejects.toBe(tooMuch);
    expect(controller.told).toEqual(['abort: too large']);
    body.push(Buffer.from('y'));
    body.end();
    expect(controller.told).toHaveLength(1);
  });

  it('stops the transfer when a waiting reader fails', async () => {
    const controller = fakeController();
    const body = new ResponseBody(controller);
    const diskFull = new Error('ENOSPC');
    const read = body.read(() => Promise.reject(diskFull));
    body.push(Buffer.from('x'));
    await expect(read).rejects.toBe(diskFull);
    expect(controller.told).toEqual(['pause', 'abort: ENOSPC']);
  });

  it('fails a read with the transfer error, whether it came before the read or during it', async () => {
    const cut = new Error('other side closed');
    const early = new ResponseBody(fakeController());
    early.push(Buffer.from('part'));
    early.fail(cut);
    await expect(early.read(() => undefined)).rejects.toBe(cut);

    const late = new ResponseBody(fakeController());
    const read = late.read(() => undefined);
    late.push(Buffer.from('part'));
    late.fail(cut);
    await expect(read).rejects.toBe(cut);
  });

  it('is read once, and a destroy after the end aborts nothing', async () => {
    const controller = fakeController();
    const body = new ResponseBody(controller);
    body.end();
    await body.read(() => undefined);
    await expect(body.read(() => undefined)).rejects.toThrow(/read once/);
    body.destroy(new Error('watchdog'));
    expect(controller.told).toEqual([]);
  });
});

describe('HttpClient bodies over a real connection', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function server(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const made = createServer(handler);
    await new Promise<void>((resolve) => made.listen(0, '127.0.0.1', resolve));
    close = () =>
      new Promise((resolve) => {
        made.closeAllConnections();
        made.close(() => resolve());
      });
    return `http://127.0.0.1:${(made.address() as AddressInfo).port}`;
  }

  it('reads a body sent in pieces, pausing for a slow reader, and reuses the connection after', async () => {
    const piece = Buffer.alloc(64 * 1024, 7);
    const baseUrl = await server((req, res) => {
      if (req.url?.startsWith('/big')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 32; i++) res.write(piece);
        res.end();
      } else res.end('small');
    });
    const client = new HttpClient({ baseUrl, connections: 1, timeoutMs: 30_000 });
    try {
      const response = await client.get('/big', { key: 'k' });
      let size = 0;
      let waits = 0;
      await response.body.read((chunk) => {
        size += chunk.length;
        if (waits++ % 4 !== 0) return undefined;
        return new Promise((resolve) => setTimeout(resolve, 5));
      });
      expect(size).toBe(32 * piece.length);
      expect(response.headers['content-type']).toBe('application/octet-stream');
      const next = await client.get('/small', { key: 'k' });
      const chunks: Buffer[] = [];
      await next.body.read((chunk) => void chunks.push(chunk));
      expect(text(chunks)).toBe('small');
    } finally {
      await client.close();
    }
  });

  it('stops a body in progress at the run abort, and keeps no listener once requests end', async () => {
    const baseUrl = await server((req, res) => {
      res.writeHead(200);
      if (req.url?.startsWith('/endless')) res.write('x'.repeat(1000));
      else res.end('done');
    });
    const client = new HttpClient({ baseUrl, connections: 2, timeoutMs: 30_000 });
    const controller = new AbortController();
    try {
      const done = await client.get('/done', { key: 'k', signal: controller.signal });
      await discardBody(done.body);
      const endless = await client.get('/endless', { key: 'k', signal: controller.signal });
      const reading = endless.body.read(() => undefined);
      const relay = abortRelay(controller.signal);
      expect(relay.listenerCount('abort')).toBe(1);
      controller.abort(new Error('SIGINT'));
      const error = await reading.catch((caught: unknown) => caught);
      expect((error as Error).message).toBe('SIGINT');
      expect(relay.listenerCount('abort')).toBe(0);
      const late = await client
        .get('/done', { key: 'k', signal: controller.signal })
        .catch((caught: unknown) => caught);
      expect(isRabbitError(late) ? late.code : late).toBe('INTERRUPTED');
    } finally {
      await client.close();
    }
  });

  it('fails a read when the server cuts the body short', async () => {
    const baseUrl = await server((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const client = new HttpClient({ baseUrl, connections: 1, timeoutMs: 30_000 });
    try {
      const response = await client.get('/cut', { key: 'k' });
      const seen: Buffer[] = [];
      await expect(response.body.read((chunk) => void seen.push(chunk))).rejects.toThrow();
      expect(text(seen)).toBe('only part');
    } finally {
      await client.close();
    }
  });
});
