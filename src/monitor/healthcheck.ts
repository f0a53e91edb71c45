import { setTimeout as wait } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';

/**
 * Pings in healthchecks.io's convention, which Cronitor and self-hosted Healthchecks accept too: `URL/start` when a run begins, `URL` when it succeeds, `URL/<exit
 * code>` (1-255) when it does not. The exit code form says more than `/fail` and healthchecks.io
 * treats every non-zero code as a failure. Each ping is a POST whose body is the run's one-line
 * JSON summary, which healthchecks.io keeps as the ping's log.
 *
 * A ping that cannot be delivered never fails the run it reports on: the caller logs it and goes
 * on. Hence short timeouts and few retries: a dead monitor costs a night a few seconds, not hours.
 */
export const PING_DEFAULTS = {
  /** Per attempt, connection and answer together (curl's `-m 10` in healthchecks.io's examples, halved). */
  timeoutMs: 5_000,
  /** Retries after the first attempt, on a network error, a timeout, 429 or 5xx. */
  retries: 2,
  /** Before the first retry; doubled before each further one. */
  retryDelayMs: 500,
} as const;

export type PingKind = 'start' | 'success' | { exitCode: number };

export interface PingOptions {
  dispatcher?: Dispatcher;
  timeoutMs?: number;
  retries?: number;
  retryDelayMs?: number;
  /** How the waits between attempts are waited (tests pass a clock of their own). */
  sleep?: (ms: number) => Promise<unknown>;
}

export type PingOutcome = { ok: true; status: number } | { ok: false; reason: string; attempts: number };

/** The URL a ping of `kind` goes to: the check's URL with `/start` or `/<code>` appended (0 is plain success). */
export function pingUrl(base: string, kind: PingKind): string {
  const url = new URL(base);
  const suffix = kind === 'start' ? 'start' : kind === 'success' || kind.exitCode === 0 ? '' : String(kind.exitCode);
  if (suffix !== '') url.pathname = `${url.pathname.replace(/\/+$/, '')}/${suffix}`;
  return url.toString();
}

export async function ping(
  base: string,
  kind: PingKind,
  body: string,
  options: PingOptions = {},
): Promise<PingOutcome> {
  const {
    timeoutMs = PING_DEFAULTS.timeoutMs,
    retries = PING_DEFAULTS.retries,
    retryDelayMs = PING_DEFAULTS.retryDelayMs,
    sleep = wait,
  } = options;
  const url = pingUrl(base, kind);
  let reason = '';
  for (let attempt = 1; ; attempt++) {
    let retryable = true;
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      await response.body.dump();
      if (response.statusCode < 300) return { ok: true, status: response.statusCode };
      reason = `HTTP ${response.statusCode}`;
      retryable = response.statusCode === 429 || response.statusCode >= 500;
    } catch (error) {
      reason = describe(error, timeoutMs);
    }
    if (!retryable || attempt > retries) return { ok: false, reason, attempts: attempt };
    await sleep(retryDelayMs * 2 ** (attempt - 1));
  }
}

function describe(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}
