import type { Readable } from 'node:stream';

/** Takes one chunk; a promise returned means "wait for it before the next". */
export type OnChunk = (chunk: Buffer) => Promise<void> | undefined;

/**
 * Bytes read once, chunk by chunk, to their end: a response body (`ResponseBody`), a stream
 * through `streamChunks`, or bytes already in memory through `bufferChunks`.
 */
export interface ChunkSource {
  read(onChunk: OnChunk): Promise<void>;
}

/** A stream as a ChunkSource, read with `readChunks`. */
export function streamChunks(stream: Readable): ChunkSource {
  return { read: (onChunk) => readChunks(stream, onChunk) };
}

/** Bytes in memory as a ChunkSource of one chunk; what `onChunk` throws rejects the read. */
export function bufferChunks(data: Buffer): ChunkSource {
  return {
    async read(onChunk) {
      await onChunk(data);
    },
  };
}

/**
 * Reads a stream to its end, handing each chunk to `onChunk` as it comes. When `onChunk` returns
 * a promise (a write that must wait), the stream is paused until it settles. Rejects with the
 * stream's error, with what `onChunk` throws or rejects with (the stream is then destroyed), or
 * with a premature-close error when the stream closes before its end.
 *
 * This is what `for await (const chunk of stream)` does, without its async iterator: for a
 * response body of one or two chunks (nearly all of an export), the iterator's promises and
 * end-of-stream watcher are a noticeable share of what the whole request costs.
 */
export function readChunks(stream: Readable, onChunk: OnChunk): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let waiting: Promise<void> | undefined;
    let ended = false;
    let settled = false;
    const detach = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', fail);
      stream.off('close', onClose);
      // Whatever the stream says after this is no longer anyone's business, but must not crash.
      stream.on('error', ignore);
    };
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      detach();
      stream.destroy();
      reject(error);
    };
    const finish = (): void => {
      if (settled) return;
      settled = true;
      detach();
      resolve();
    };
    function onData(chunk: Buffer): void {
      let pending: Promise<void> | undefined;
      try {
        pending = onChunk(chunk);
      } catch (error) {
        fail(error);
        return;
      }
      if (!pending) return;
      stream.pause();
      waiting = pending.then(() => {
        waiting = undefined;
        if (ended) finish();
        else stream.resume();
      }, fail);
    }
    function onEnd(): void {
      ended = true;
      if (!waiting) finish();
    }
    function onClose(): void {
      if (!ended) fail(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    }
    // A stream destroyed before it is read (an abort that came first) has no events left to give.
    if (stream.errored) return fail(stream.errored);
    if (stream.destroyed) return stream.readableEnded ? finish() : onClose();
    // `on`, not `once`: detach removes all four, and `once` wraps each listener in two more objects.
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', fail);
    stream.on('close', onClose);
  });
}

function ignore(): void {
  // See detach.
}
