import type { Dispatcher } from 'undici';
import type { AbortRelay } from './abort-relay.js';
import type { ChunkSource, OnChunk } from '../core/read-chunks.js';

/** A response as `HttpClient` hands it over: headers in lower case, the body still to be read. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: ResponseBody;
}

/**
 * A response body as undici's dispatcher delivers it: chunks pushed by the exchange below, read
 * once with `read`. It is not a stream: a Readable per response (undici's `request`) costs a
 * stream's state, its events and their turns of the queue, a sizeable share of what a request
 * costs for a body of one chunk (docs/design.md, "undici's dispatch, not its request").
 * Chunks that come before `read` wait here; a reader that must wait (a file write) pauses the
 * transfer until it may go on.
 */
export class ResponseBody implements ChunkSource {
  private readonly queued: Buffer[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private reader: { onChunk: OnChunk; resolve: () => void; reject: (error: unknown) => void } | undefined;
  private waiting = false;
  private done = false;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /**
   * Hands each chunk to `onChunk` as it comes and resolves at the end. When `onChunk` returns a
   * promise, the transfer pauses until it settles. Rejects with the transfer's error, or with what
   * `onChunk` throws or rejects with (the request is then aborted).
   */
  read(onChunk: OnChunk): Promise<void> {
    if (this.reader || this.done) return Promise.reject(new Error('internal: a response body is read once'));
    return new Promise<void>((resolve, reject) => {
      this.reader = { onChunk, resolve, reject };
      if (this.failure) this.settle(this.failure);
      else this.drain();
    });
  }

  /** Stops the transfer: the request is aborted, and a read fails with `error`. */
  destroy(error?: unknown): void {
    const reason = error ?? new Error('the response body was dropped');
    if (!this.ended && !this.failure)
      this.controller.abort(reason instanceof Error ? reason : new Error(String(reason)));
    this.fail(reason);
  }

  /** From the exchange: the next chunk. */
  push(chunk: Buffer): void {
    if (this.failure || this.done) return;
    this.queued.push(chunk);
    this.drain();
  }

  /** From the exchange: the body is complete. */
  end(): void {
    if (this.failure) return;
    this.ended = true;
    this.drain();
  }

  /** From the exchange (or `destroy`): the body will not be complete. */
  fail(error: unknown): void {
    if (this.failure || this.done) return;
    this.failure = { error };
    this.queued.length = 0;
    if (this.reader) this.settle(this.failure);
  }

  private drain(): void {
    const reader = this.reader;
    if (!reader || this.waiting || this.done) return;
    while (this.queued.length > 0) {
      const chunk = this.queued.shift() as Buffer;
      let pending: Promise<void> | undefined;
      try {
        pending = reader.onChunk(chunk);
      } catch (error) {
        this.destroy(error);
        return;
      }
      if (pending) {
        this.waiting = true;
        this.controller.pause();
        pending.then(
          () => {
            this.waiting = false;
            if (this.failure || this.done) return;
            this.controller.resume();
            this.drain();
          },
          (error: unknown) => {
            this.waiting = false;
            this.destroy(error);
          },
        );
        return;
      }
    }
    if (this.ended) this.settle();
  }

  private settle(failure?: { error: unknown }): void {
    const reader = this.reader;
    if (!reader || this.done) return;
    this.done = true;
    if (failure) reader.reject(failure.error);
    else reader.resolve();
  }
}

/**
 * One request through `Dispatcher.dispatch`: resolves with the response once its headers are in,
 * then feeds its body. It listens on the run's abort relay while the request lasts; an abort
 * before the request reached a connection is applied the moment it does.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  /** Set at the headers, when the response has been handed over. */
  private body: ResponseBody | undefined;
  private controller: Dispatcher.DispatchController | undefined;

  constructor(
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly relay: AbortRelay | undefined,
  ) {
    relay?.on('abort', this.onAbort);
  }

  private readonly onAbort = (): void => {
    this.controller?.abort(abortReason(this.relay));
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.relay?.aborted) controller.abort(abortReason(this.relay));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx answers come before the real one and carry no body of ours.
    if (statusCode < 200) return;
    this.body = new ResponseBody(controller);
    this.resolve({ status: statusCode, headers: flattenHeaders(headers), body: this.body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.push(chunk);
  }

  onResponseEnd(): void {
    this.relay?.off('abort', this.onAbort);
    this.body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.relay?.off('abort', this.onAbort);
    if (this.body) this.body.fail(error);
    else this.reject(error);
  }
}

function abortReason(relay: AbortRelay | undefined): Error {
  const reason = relay?.reason;
  return reason instanceof Error ? reason : Object.assign(new Error('Request aborted'), { code: 'UND_ERR_ABORTED' });
}

/**
 * Header names in lower case, repeated headers joined. undici already hands them over that way
 * but for repeats (arrays), so the usual answer is passed on as it is rather than copied.
 */
function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  let plain = true;
  for (const name in raw) {
    const value = raw[name];
    if (typeof value !== 'string' || name !== name.toLowerCase()) {
      plain = false;
      break;
    }
  }
  if (plain) return raw as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
