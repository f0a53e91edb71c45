import type { HttpResponse } from '../client/http-client.js';
import { discardBody, statusError, toNetworkError } from '../client/http-client.js';
import { keyRefusedError, REFUSAL_STATUS } from '../client/key-refusal.js';
import { answersAsService } from '../client/outage-policy.js';
import { parseRetryAfter } from '../client/retry-policy.js';
import type { RetryContext, RetryEvent } from '../client/retrying.js';
import { serviceRequest, type RequestContext } from '../client/service-request.js';
import { stopReason } from '../client/stop-reason.js';
import { watchTransfer, type TransferWatch } from '../client/transfer-watchdog.js';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { createdElementId } from '../api/entry-paths.js';
import { parseJson } from '../api/parse.js';
import { DecodedBody, parseContentEncoding } from '../client/content-coding.js';
import type { ChunkSource } from '../core/read-chunks.js';

/**
 * The restore's requests, through the one client (client/service-request.ts) with the session's
 * parts (client/service-session.ts): the export's retry policy with Retry-After, the outage
 * pause, the key watch, the adaptive concurrency and the stall watchdog. What may be sent again
 * is restore's rule, the same as before the client was shared:
 * - GET, PUT and DELETE are safe to repeat (a PUT sets the same attributes again, a DELETE of what
 *   is gone is what was wanted), and are retried on the retry policy's statuses (408, 425, 429,
 *   500, 502-504), a lost connection or a stalled body, and after an outage; any other status is
 *   the result, not retried;
 * - a POST is sent once per call: when its answer is lost (no answer, 408, 5xx, a 2xx without the
 *   new id) it may have been applied, and the caller (apply-plan.ts) lists the parent before it
 *   sends it again. A 429 or 425 is waited out the same way; any other 4xx says it was turned down.
 */
export interface LiveServiceOptions extends RequestContext {
  key: string;
  /** How large an answer may be, as decoded: a list (or the prototype), one element. */
  caps: ReadCaps;
  /** A request failed and waits before it is sent again: told as the wait begins. */
  onWait?: (event: RetryEvent) => void;
}

export interface ReadCaps {
  list: number;
  element: number;
}

export type ReadResult = { status: 200; value: unknown } | { status: number };

export type WriteResult =
  | { kind: 'ok'; status: number; newId?: string }
  /** No answer, or one that does not say whether the write was applied. */
  | { kind: 'unknown'; error: RabbitError }
  | { kind: 'refused'; status: number };

export class LiveService {
  constructor(private readonly options: LiveServiceOptions) {}

  /** The client's context, for a loop of the restore's own over it (a create that looks before it repeats). */
  get context(): RetryContext {
    return this.options;
  }

  /**
   * GET and parse JSON, as large as `read`'s cap allows; a status other than 200 that retries do
   * not cure is returned, not thrown.
   */
  async getJson(source: string, read: keyof ReadCaps): Promise<ReadResult> {
    const maxBytes = this.options.caps[read];
    return serviceRequest<ReadResult>(this.options, {
      method: 'GET',
      source,
      key: this.options.key,
      send: () => this.options.client.get(source, { key: this.options.key, signal: this.options.signal }),
      accept: async (response, watch) => {
        if (response.status !== 200) return undefined;
        const data = await readBody(response, maxBytes, source, watch);
        return { status: 200, value: parseJson(data, source) };
      },
      settle: (status) => ({ status }),
      ...this.waits(),
    });
  }

  async put(source: string, body: string): Promise<WriteResult> {
    return this.repeatableWrite('PUT', source, body);
  }

  async delete(source: string): Promise<WriteResult> {
    return this.repeatableWrite('DELETE', source);
  }

  /**
   * One POST. `unknown` when it may or may not have been applied. Nothing is sent with a key the
   * service refused, and a refusal of it is judged by the key watch, as every other request's is.
   */
  async post(source: string, body: string): Promise<WriteResult> {
    const { key, keys } = this.options;
    await this.options.rateLimiter?.take(this.options.signal);
    const refused = keys?.refusalOf(key);
    if (refused) throw keyRefusedError(refused, source, `POST ${source} was not sent`);
    const sent = keys?.sending() ?? 0;
    let response: HttpResponse;
    try {
      response = await this.options.client.send('POST', source, { key, body, signal: this.options.signal });
    } catch (error) {
      return this.lost(error, source, 'POST');
    }
    if (answersAsService(response.status)) this.options.outage?.answered();
    // Its body says nothing the status and Location do not, but a service that trickles it for
    // ever would hold the restore there: it is read under the stall watchdog like any other, on
    // the run's clock as theirs is (service-request.ts).
    const answer = response.body;
    const watch = watchTransfer(
      (error) => answer.destroy(error),
      this.options.stall,
      source,
      this.options.watchdog,
      'POST',
    );
    try {
      await discardBody(answer, watch.seen);
    } finally {
      watch.stop();
    }
    if (response.status >= 200 && response.status < 300) {
      const newId = idFromLocation(response.headers['location']);
      if (newId !== undefined) return { kind: 'ok', status: response.status, newId };
      return {
        kind: 'unknown',
        error: new RabbitError('BAD_SHAPE', `POST ${source}: no element id in the Location header`, {
          source,
          method: 'POST',
        }),
      };
    }
    // A 5xx may come after the element was stored; a 4xx says the request was turned down, for
    // good but for 429 and 425, which say "not now": waited out (Retry-After a floor) like a lost
    // answer, so a storm of them delays the creates instead of failing every one.
    if (response.status >= 500 || response.status === 408 || response.status === 429 || response.status === 425) {
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'], this.options.now());
      return { kind: 'unknown', error: statusError('POST', source, response.status, retryAfterMs) };
    }
    // A key revoked mid-restore, told from a key that may read but not write (the caller's to say).
    const refusal = REFUSAL_STATUS.has(response.status)
      ? await keys?.judge(key, sent, response.status, source)
      : undefined;
    if (refusal) throw keyRefusedError(refusal, source, `POST ${source}`);
    return { kind: 'refused', status: response.status };
  }

  private async repeatableWrite(method: 'PUT' | 'DELETE', source: string, body?: string): Promise<WriteResult> {
    try {
      return await serviceRequest<WriteResult>(this.options, {
        method,
        source,
        key: this.options.key,
        send: () =>
          this.options.client.send(method, source, {
            key: this.options.key,
            signal: this.options.signal,
            ...(body !== undefined ? { body } : {}),
          }),
        accept: async (response, watch) => {
          if (response.status < 200 || response.status >= 300) return undefined;
          await discardBody(response.body, watch.seen);
          return { kind: 'ok', status: response.status };
        },
        settle: (status) => ({ kind: 'refused', status }),
        ...this.waits(),
      });
    } catch (error) {
      if (isRabbitError(error, 'INTERRUPTED') || this.options.signal.aborted) throw error;
      return {
        kind: 'unknown',
        error: isRabbitError(error) ? error : toNetworkError(error, source, this.options.signal, method),
      };
    }
  }

  /** The hook that tells a request's waits, for a retry loop over this service (restore's create's too). */
  waits(): { onWait?: (event: RetryEvent) => void } {
    const { onWait } = this.options;
    return onWait ? { onWait } : {};
  }

  private lost(error: unknown, source: string, method: string): WriteResult {
    if (this.options.signal.aborted) throw stopReason(this.options.signal, source, method);
    return {
      kind: 'unknown',
      error: isRabbitError(error) ? error : toNetworkError(error, source, this.options.signal, method),
    };
  }
}

/** The new element's id from a Location such as `https://host/rabbit/api/.../elements/element12.json`. */
export function idFromLocation(location: string | undefined): string | undefined {
  if (location === undefined) return undefined;
  return createdElementId(location);
}

async function readBody(
  response: HttpResponse,
  maxBytes: number,
  source: string,
  watch: TransferWatch,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const decoded = decodedChunks(response, maxBytes, source, watch);
  await decoded.read((chunk) => {
    if (decoded === response.body) watch.seen(chunk.length);
    size += chunk.length;
    // Thrown from here, it also stops the transfer.
    if (size > maxBytes)
      throw new RabbitError('BODY_TOO_LARGE', `GET ${source}: body exceeds ${maxBytes} bytes`, {
        source,
        method: 'GET',
      });
    chunks.push(chunk);
    return undefined;
  });
  return Buffer.concat(chunks);
}

/** The body as the service meant it: GETs ask for compression (content-coding.ts). */
function decodedChunks(response: HttpResponse, maxBytes: number, source: string, watch: TransferWatch): ChunkSource {
  const body = response.body;
  try {
    const codings = parseContentEncoding(response.headers['content-encoding'], source);
    if (codings.length === 0) return body;
    // The watchdog sees the bytes on the wire, as the crawl's does.
    return new DecodedBody(body, {
      codings,
      maxBytes,
      source,
      onWire: watch.seen,
      abort: (error) => body.destroy(error),
    });
  } catch (error) {
    body.destroy(error);
    throw error;
  }
}
