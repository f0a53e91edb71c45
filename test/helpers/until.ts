import { setTimeout as sleep } from 'node:timers/promises';

export interface UntilOptions {
  /** What is waited for, for the error when it never comes. */
  what?: string;
  /** Give up after this long (default 30 s): a guard against a hung test, never a measurement. */
  timeoutMs?: number;
  /** Between two looks (default 5 ms). */
  intervalMs?: number;
  /** Stops looking: the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The one way a test waits for something it cannot be told of directly (a count on the fake
 * service, a file another process writes, a port that starts to listen): looks every `intervalMs`
 * and resolves with the first value of `probe` that is neither false, undefined, null nor ''.
 * A probe that throws counts as not yet.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  { what = 'the condition', timeoutMs = 30_000, intervalMs = 5, signal }: UntilOptions = {},
): Promise<Exclude<T, false | undefined | null | ''>> {
  const started = Date.now();
  for (;;) {
    signal?.throwIfAborted();
    const value = await Promise.resolve()
      .then(probe)
      .catch(() => undefined);
    if (value !== false && value !== undefined && value !== null && value !== '')
      return value as Exclude<T, false | undefined | null | ''>;
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(intervalMs, undefined, signal ? { signal } : {});
  }
}

/**
 * Runs `act` once `probe` holds, beside whatever the test is doing meanwhile (interrupt a run after
 * so many requests); returns the stop to call once that is over, so no look outlives the test.
 */
export function whenever(
  probe: () => boolean | Promise<boolean>,
  act: () => void,
  options: Omit<UntilOptions, 'signal'> = {},
): () => void {
  const stop = new AbortController();
  until(probe, { ...options, signal: stop.signal }).then(act, () => undefined);
  return () => stop.abort();
}
