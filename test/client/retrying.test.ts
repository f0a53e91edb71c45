import { describe, expect, it } from 'vitest';
import { RabbitError } from '../../src/core/errors.js';
import { RETRY_DEFAULTS } from '../../src/client/retry-policy.js';
import { retrying, type Outcome, type RetryContext, type RetryEvent } from '../../src/client/retrying.js';

function context(waits: number[]): RetryContext {
  return {
    retry: { ...RETRY_DEFAULTS, baseDelayMs: 100 },
    signal: new AbortController().signal,
    random: () => 0.5,
    now: () => 0,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}

const busy = (retryAfterMs?: number): RabbitError =>
  new RabbitError('HTTP_STATUS', 'GET /x answered 503', {
    status: 503,
    errorClass: 'retryable',
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });

describe('the one retry loop', () => {
  it('waits the backoff with Retry-After as its floor, and reports each retry once it goes out', async () => {
    const waits: number[] = [];
    const retries: RetryEvent[] = [];
    const answers: Array<Outcome<string>> = [{ failed: busy(2_000) }, { failed: busy() }, { done: 'body' }];
    const result = await retrying(context(waits), {
      method: 'GET',
      source: '/x',
      attempt: () => Promise.resolve(answers.shift() as Outcome<string>),
      onRetry: (event) => retries.push(event),
    });
    expect(result).toBe('body');
    // Full jitter at 0.5 of 100 ms, then of 200 ms; the first wait is lifted to the 2 s asked for.
    expect(waits).toEqual([2_000, 100]);
    expect(retries.map((event) => [event.attempt, event.delayMs, event.reason])).toEqual([
      [1, 2_000, '503'],
      [2, 100, '503'],
    ]);
  });

  it('tells each wait as it begins, with what the retry reports once it goes out', async () => {
    const log: string[] = [];
    const ctx = { ...context([]), sleep: (ms: number) => Promise.resolve(log.push(`slept ${ms}`)) };
    const answers: Array<Outcome<string>> = [{ failed: busy(2_000) }, { done: 'body' }];
    await retrying(ctx, {
      method: 'GET',
      source: '/x',
      attempt: () => Promise.resolve(answers.shift() as Outcome<string>),
      onWait: (event) => log.push(`wait ${event.delayMs} ${event.reason} ${event.attempt}`),
      onRetry: (event) => log.push(`retry ${event.delayMs} ${event.reason} ${event.attempt}`),
    });
    expect(log).toEqual(['wait 2000 503 1', 'slept 2000', 'retry 2000 503 1']);
  });

  it('throws a failure that may not be repeated at once, with its attempts, unless the caller says it may', async () => {
    const waits: number[] = [];
    const refused = new RabbitError('HTTP_STATUS', 'PUT /x answered 500', { status: 500, errorClass: 'resource' });
    const once = retrying(context(waits), {
      method: 'PUT',
      source: '/x',
      attempt: () => Promise.resolve({ failed: refused }),
    });
    await expect(once).rejects.toMatchObject({ code: 'HTTP_STATUS', attempts: 1 });
    expect(waits).toEqual([]);

    let sent = 0;
    const lost = new RabbitError('BAD_SHAPE', 'POST /x: no element id', { errorClass: 'resource' });
    const looked = await retrying(context(waits), {
      method: 'POST',
      source: '/x',
      attempt: () => Promise.resolve(++sent < 3 ? { failed: lost } : { done: sent }),
      retryable: () => true,
    });
    expect(looked).toBe(3);
  });

  it('gives up once the attempts are spent, throwing the last failure', async () => {
    const waits: number[] = [];
    let sent = 0;
    const run = retrying(context(waits), {
      method: 'GET',
      source: '/x',
      attempt: () => {
        sent++;
        return Promise.resolve({ failed: busy() });
      },
    });
    await expect(run).rejects.toMatchObject({ status: 503, attempts: RETRY_DEFAULTS.attempts });
    expect(sent).toBe(RETRY_DEFAULTS.attempts);
    expect(waits).toHaveLength(RETRY_DEFAULTS.attempts - 1);
  });
});
