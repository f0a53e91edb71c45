import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Caps requests per second (`--max-rps`). Requests are spaced evenly rather than allowed in
 * bursts: a server being shut down is rarely helped by bursts.
 */
export class RateLimiter {
  private next = 0;
  private readonly intervalMs: number;

  constructor(
    perSecond: number,
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<unknown> = (ms, signal) =>
      sleep(ms, undefined, { signal }),
  ) {
    this.intervalMs = 1000 / perSecond;
  }

  async take(signal?: AbortSignal): Promise<void> {
    const now = this.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at > now) await this.wait(at - now, signal);
  }
}
