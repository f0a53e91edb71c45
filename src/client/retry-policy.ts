/**
 * When to try a request again and how long to wait first. Pure functions with their defaults in
 * one block, so the policy can be read at a glance and tested with a table.
 */
export const RETRY_DEFAULTS = {
  /** Attempts in all, the first included. */
  attempts: 5,
  /** First backoff ceiling; each further attempt doubles it (full jitter picks 0..ceiling). */
  baseDelayMs: 250,
  /** No single backoff waits longer than this. */
  maxDelayMs: 15_000,
  /** A server's Retry-After is honoured up to this; longer asks are cut to it. */
  maxRetryAfterMs: 60_000,
  /** All waits for one resource together stay under this; past it the resource fails. */
  maxTotalWaitMs: 180_000,
} as const;

export type RetryPolicy = { [K in keyof typeof RETRY_DEFAULTS]: number };

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status);
}

/** Answers that say "slow down" (they lower the concurrency), as opposed to plain failures. */
export function isThrottleStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** Retry-After is either delta-seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Every HTTP-date form starts with the day's name; Date.parse alone would take "-1" or "1.5".
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * Delay before attempt `attempt + 1`, after `attempt` failed attempts (1-based). Full jitter
 * (random in [0, ceiling)) spreads a crowd of retries so they do not hit the server together; a
 * Retry-After from the server is a floor, capped so a hostile value cannot stall the run.
 */
export function retryDelay(attempt: number, policy: RetryPolicy, random: () => number, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined) return jittered;
  return Math.min(policy.maxRetryAfterMs, Math.max(retryAfterMs, jittered));
}

/** Whether another attempt fits within the attempt count and the total waiting budget. */
export function mayRetry(attempt: number, waitedMs: number, nextDelayMs: number, policy: RetryPolicy): boolean {
  return attempt < policy.attempts && waitedMs + nextDelayMs <= policy.maxTotalWaitMs;
}
