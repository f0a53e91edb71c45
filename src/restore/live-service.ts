import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpClient, HttpResponse } from '../client/http-client.js';
import { discardBody, statusError, toNetworkError } from '../client/http-client.js';
import type { RateLimiter } from '../client/rate-limiter.js';
import type { RetryPolicy } from '../client/retry-policy.js';
import { isRetryableStatus, mayRetry, parseRetryAfter, retryDelay } from '../client/retry-policy.js';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { createdElementId } from '../api/entry-paths.js';
import { parseJson } from '../api/parse.js';
import { DecodedBody, parseContentEncoding } from '../client/content-coding.js';
import type { ChunkSource } from '../core/read-chunks.js';

/**
 * The restore's requests. Reads, PUTs and DELETEs are safe to repeat and are retried on 429, 5xx
 * and lost connections per the export's retry policy. A POST is sent once per call: when its
 * answer is lost the caller has to look whether it was applied before sending it again.
 */
export interface LiveServiceOptions {
  client: HttpClient;
  key: string;
  retry: RetryPolicy;
  signal: AbortSignal;
  random: () => number;
  now: () => number;
  rateLimiter?: RateLimiter;
  onRetry?: (event: { method: string; source: string; attempt: number; delayMs: number; reason: string }) => void;
}

export type ReadResult = { status: 200; value: unknown } | { status: number };

export type WriteResult =
  | { kind: 'ok'; status: number; newId?: string }
  /** No answer, or one that does not say whether the write was applied. */
  | { kind: 'unknown'; error: RabbitError }
  | { kind: 'refused'; status: number };

export class LiveService {
  constructor(private readonly options: LiveServiceOptions) {}

  /** GET and parse JSON; a status other than 200 that retries do not cure is returned, not thrown. */
  async getJson(source: string, maxBytes: number): Promise<ReadResult> {
    return this.withRetries<ReadResult>(
      'GET',
      source,
      (status) => ({ status }),
      async () => {
        const response = await this.options.client.get(source, { key: this.options.key, signal: this.options.signal });
        if (response.status !== 200) return { response };
        const data = await readBody(response, maxBytes, source);
        return { result: { status: 200, value: parseJson(data, source) } };
      },
    );
  }

  async put(source: string, body: string): Promise<WriteResult> {
    return this.repeatableWrite('PUT', source, body);
  }

  async delete(source: string): Promise<WriteResult> {
    return this.repeatableWrite('DELETE', source);
  }

  /** One POST. `unknown` when it may or may not have been applied. */
  async post(source: string, body: string): Promise<WriteResult> {
    await this.options.rateLimiter?.take(this.options.signal);
    let response: HttpResponse;
    try {
      response = await this.options.client.send('POST', source, {
        key: this.options.key,
        body,
        signal: this.options.signal,
      });
    } catch (error) {
      return this.lost(error, source, 'POST');
    }
    await discardBody(response.body);
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
    // A 5xx may come after the element was stored; only a 4xx says the request was turned down.
    if (response.status >= 500 || response.status === 408) {
      return { kind: 'unknown', error: statusError('POST', source, response.status) };
    }
    return { kind: 'refused', status: response.status };
  }

  private async repeatableWrite(method: 'PUT' | 'DELETE', source: string, body?: string): Promise<WriteResult> {
    try {
      const refused = (status: number): WriteResult => ({ kind: 'refused', status });
      return await this.withRetries<WriteResult>(method, source, refused, async () => {
        const response = await this.options.client.send(method, source, {
          key: this.options.key,
          signal: this.options.signal,
          ...(body !== undefined ? { body } : {}),
        });
        if (response.status < 200 || response.status >= 300) return { response };
        await discardBody(response.body);
        return { result: { kind: 'ok', status: response.status } };
      });
    } catch (error) {
      if (isRabbitError(error, 'INTERRUPTED')) throw error;
      return {
        kind: 'unknown',
        error: isRabbitError(error) ? error : toNetworkError(error, source, this.options.signal, method),
      };
    }
  }

  /**
   * Runs `attempt` until it yields a result, retrying retryable statuses and network failures; a
   * status retries do not cure becomes the result `final` makes of it.
   */
  private async withRetries<T>(
    method: string,
    source: string,
    final: (status: number) => T,
    attempt: () => Promise<{ result: T } | { response: HttpResponse }>,
  ): Promise<T> {
    const { retry, signal } = this.options;
    let waited = 0;
    for (let n = 1; ; n++) {
      let failure: RabbitError;
      try {
        await this.options.rateLimiter?.take(signal);
        const outcome = await attempt();
        if ('result' in outcome) return outcome.result;
        const { status, headers } = outcome.response;
        await discardBody(outcome.response.body);
        if (!isRetryableStatus(status)) return final(status);
        failure = statusError(method, source, status, parseRetryAfter(headers['retry-after'], this.options.now()));
      } catch (error) {
        failure = isRabbitError(error) ? error : toNetworkError(error, source, signal, method);
      }
      if (signal.aborted) throw new RabbitError('INTERRUPTED', 'interrupted', { source });
      if (failure.errorClass !== 'retryable') throw failure;
      const delay = retryDelay(n, retry, this.options.random, failure.retryAfterMs);
      if (!mayRetry(n, waited, delay, retry)) throw failure;
      waited += delay;
      this.options.onRetry?.({
        method,
        source,
        attempt: n,
        delayMs: delay,
        reason: failure.status !== undefined ? String(failure.status) : failure.code,
      });
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        throw new RabbitError('INTERRUPTED', 'interrupted', { source });
      }
    }
  }

  private lost(error: unknown, source: string, method: string): WriteResult {
    if (this.options.signal.aborted) throw new RabbitError('INTERRUPTED', 'interrupted', { source });
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

async function readBody(response: HttpResponse, maxBytes: number, source: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  await decodedChunks(response, maxBytes, source).read((chunk) => {
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
function decodedChunks(response: HttpResponse, maxBytes: number, source: string): ChunkSource {
  const body = response.body;
  try {
    const codings = parseContentEncoding(response.headers['content-encoding'], source);
    if (codings.length === 0) return body;
    return new DecodedBody(body, { codings, maxBytes, source, abort: (error) => body.destroy(error) });
  } catch (error) {
    body.destroy(error);
    throw error;
  }
}

/** Reads and drops a body we do not need, so the connection can be reused. */
