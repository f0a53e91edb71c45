import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as realSleep } from 'node:timers/promises';
import type { Reply } from './payload.js';

/**
 * Writes a reply, honouring backpressure so streamed bodies (padded PNGs, endless bodies) never
 * pile up in memory, and stopping as soon as the client goes away.
 */
export interface SendMode {
  /** Send the full Content-Length, then half the body, then drop the connection. */
  truncate?: boolean;
  /** Spread the body over 10 pieces with pauses adding up to this many milliseconds. */
  slowBodyMs?: number;
  /** Send the body chunked, one byte every this many milliseconds, for ever (until the client goes). */
  trickleMs?: number;
}

const SLOW_PIECES = 10;

export async function sendReply(
  req: IncomingMessage,
  res: ServerResponse,
  reply: Reply,
  mode: SendMode = {},
  sleep: (ms: number) => Promise<void> = realSleep,
): Promise<void> {
  const payload = reply.payload;
  if (mode.trickleMs !== undefined && payload !== undefined && req.method !== 'HEAD')
    return trickle(res, reply, payload, mode.trickleMs, sleep);
  const headers = { ...reply.headers };
  if (payload?.size !== undefined) headers['content-length'] = String(payload.size);
  res.writeHead(reply.status, headers);
  if (payload === undefined || req.method === 'HEAD') {
    if (mode.truncate) return dropAfterFlush(res);
    res.end();
    return;
  }
  if (payload.bytes !== undefined && !mode.truncate && mode.slowBodyMs === undefined) {
    res.end(payload.bytes);
    return;
  }
  const size = payload.size ?? Number.POSITIVE_INFINITY;
  const limit = mode.truncate ? Math.floor(size / 2) : size;
  const piece = mode.slowBodyMs === undefined ? Number.POSITIVE_INFINITY : Math.max(1, Math.ceil(size / SLOW_PIECES));
  const pause = (mode.slowBodyMs ?? 0) / SLOW_PIECES;
  let written = 0;
  for (const chunk of payload.chunks()) {
    let rest = chunk.subarray(0, Math.max(0, limit - written));
    while (rest.length > 0) {
      if (gone(res)) return;
      // Bytes still to go before the current slow piece is complete.
      const room = piece - (written % piece);
      const part = rest.subarray(0, room);
      rest = rest.subarray(part.length);
      written += part.length;
      if (!res.write(part)) await drained(res);
      if (written % piece === 0 && written < limit) await sleep(pause);
    }
    if (written >= limit) break;
  }
  if (gone(res)) return;
  if (mode.truncate) return dropAfterFlush(res);
  res.end();
}

/**
 * An overloaded server or a broken proxy: headers at once, then the body's bytes one at a time,
 * round and round, without end. No idle timeout ever fires on it; only a minimum rate does.
 */
async function trickle(
  res: ServerResponse,
  reply: Reply,
  payload: NonNullable<Reply['payload']>,
  pauseMs: number,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  res.writeHead(reply.status, reply.headers);
  res.flushHeaders();
  const [first] = payload.bytes === undefined ? payload.chunks() : [payload.bytes];
  const source = first !== undefined && first.length > 0 ? first : Buffer.from(' ');
  for (let i = 0; !gone(res); i++) {
    res.write(source.subarray(i % source.length, (i % source.length) + 1));
    await sleep(pauseMs);
  }
}

function gone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Destroying at once would discard what is still queued; wait until it reached the kernel. */
function dropAfterFlush(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return;
  res.flushHeaders();
  socket.write(Buffer.alloc(0), () => socket.destroy());
}
