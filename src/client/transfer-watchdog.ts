import { RabbitError } from '../core/errors.js';
import { every, systemEvery, type RunTimer } from '../core/run-timer.js';

/**
 * The minimum transfer rate (curl's --speed-limit / --speed-time). undici's bodyTimeout is an idle
 * timeout: a server or proxy that sends one byte every two seconds is never idle, and without this
 * a night's backup could hang on one such body for ever, holding its lock. A transfer that brings
 * fewer than `minBytesPerSecond` on average over the last `windowMs` is aborted with STALLED, which
 * the fetch layer retries like a timeout.
 */
export interface StallPolicy {
  /** Average bytes per second below which a transfer counts as stalled; 0 turns the check off. */
  minBytesPerSecond: number;
  /** How long the rate must stay below the limit before the transfer is aborted. */
  windowMs: number;
}

export const STALL_DEFAULTS: StallPolicy = {
  minBytesPerSecond: 1024,
  windowMs: 30_000,
};

/** The time source and timer of the watchdog; tests pass a fake one. */
export interface WatchdogClock {
  now(): number;
  every(ms: number, tick: () => void): () => void;
}

export const SYSTEM_CLOCK: WatchdogClock = {
  now: () => performance.now(),
  // A watchdog must never be what keeps the process alive: the system's timer is unref'd.
  every: systemEvery,
};

/**
 * The watchdog on a run's own clock (its `now` and `timer`, ServiceOptions): a test's clock that
 * skips the run's waits then moves the window on as it does the backoffs, instead of the test
 * waiting the window out. A run given no timer keeps SYSTEM_CLOCK.
 */
export function watchdogClockOf(now: () => number, timer: RunTimer): WatchdogClock {
  return {
    now,
    every: (ms, tick) => every(timer, ms, tick),
  };
}

/** Buckets per window: the sliding window is exact to one bucket (1 s with the defaults). */
const BUCKETS = 30;

/**
 * Bytes received per time bucket over the last window, in a fixed ring: constant memory however
 * fast or long the transfer. The sum covers at least a whole window (one bucket more than it), so
 * a transfer is never called stalled on less than `windowMs` of evidence.
 */
export class RateMeter {
  private readonly bucketMs: number;
  private readonly counts: number[];
  private current = 0;

  constructor(
    private readonly policy: StallPolicy,
    private readonly startMs: number,
  ) {
    this.bucketMs = Math.max(1, policy.windowMs / BUCKETS);
    this.counts = new Array<number>(BUCKETS + 1).fill(0);
  }

  add(bytes: number, nowMs: number): void {
    this.advance(nowMs);
    this.counts[this.current % this.counts.length] = (this.counts[this.current % this.counts.length] ?? 0) + bytes;
  }

  stalled(nowMs: number): boolean {
    if (this.policy.minBytesPerSecond <= 0 || nowMs - this.startMs < this.policy.windowMs) return false;
    this.advance(nowMs);
    const received = this.counts.reduce((sum, count) => sum + count, 0);
    return received < (this.policy.minBytesPerSecond * this.policy.windowMs) / 1000;
  }

  /** Buckets the clock has moved past since the last call are emptied for reuse. */
  private advance(nowMs: number): void {
    const bucket = Math.floor(Math.max(0, nowMs - this.startMs) / this.bucketMs);
    const steps = Math.min(bucket - this.current, this.counts.length);
    for (let i = 1; i <= steps; i++) this.counts[(this.current + i) % this.counts.length] = 0;
    if (bucket > this.current) this.current = bucket;
  }
}

/** One transfer under watch: the reader reports what arrives, and stops the watch when done. */
export interface TransferWatch {
  /** Bytes just received. */
  seen(bytes: number): void;
  /** The transfer is over (read to its end, failed or given up): stop checking it. */
  stop(): void;
}

const UNWATCHED: TransferWatch = { seen: () => undefined, stop: () => undefined };

/**
 * Watches one transfer: when it stalls, `abort` is called with a STALLED error (the caller
 * destroys the body with it, so a read waiting on it fails at once). Checking on a timer (not only
 * when a chunk arrives) catches a body that stops altogether before the idle timeout would. The
 * reader reports each chunk through `seen` rather than reading through a wrapper: a wrapping
 * async generator cost more per request than anything else in the transfer (CPU profile of a
 * 100k-resource export).
 */
export function watchTransfer(
  abort: (error: Error) => void,
  policy: StallPolicy = STALL_DEFAULTS,
  source = '',
  clock: WatchdogClock = SYSTEM_CLOCK,
  method = 'GET',
): TransferWatch {
  if (policy.minBytesPerSecond <= 0) return UNWATCHED;
  const startMs = clock.now();
  const bucketMs = Math.max(1, policy.windowMs / BUCKETS);
  // Nearly every body ends within its first bucket: its bytes are only summed, and the meter (a
  // ring of buckets) is made for a transfer that lasts longer.
  let meter: RateMeter | undefined;
  let early = 0;
  const meterNow = (): RateMeter => {
    if (!meter) {
      meter = new RateMeter(policy, startMs);
      meter.add(early, startMs);
    }
    return meter;
  };
  const ticker = tickerFor(clock, bucketMs);
  const check = (): void => {
    const now = clock.now();
    if (now - startMs < policy.windowMs || !meterNow().stalled(now)) return;
    ticker.remove(check);
    abort(stalledError(policy, source, method));
  };
  ticker.add(check);
  return {
    seen: (bytes) => {
      const now = clock.now();
      if (!meter && now - startMs < bucketMs) early += bytes;
      else meterNow().add(bytes, now);
    },
    stop: () => ticker.remove(check),
  };
}

/**
 * One timer checks every transfer in flight, instead of a timer per request: tens of thousands of
 * requests a minute would otherwise each start and stop one. It stops at the first tick that finds
 * nothing to watch.
 */
class Ticker {
  private readonly checks = new Set<() => void>();
  private cancel: (() => void) | undefined;

  constructor(
    private readonly clock: WatchdogClock,
    private readonly intervalMs: number,
  ) {}

  add(check: () => void): void {
    this.checks.add(check);
    this.cancel ??= this.clock.every(this.intervalMs, () => {
      if (this.checks.size === 0) {
        this.cancel?.();
        this.cancel = undefined;
        return;
      }
      for (const each of this.checks) each();
    });
  }

  remove(check: () => void): void {
    this.checks.delete(check);
  }
}

const tickers = new WeakMap<WatchdogClock, Map<number, Ticker>>();

function tickerFor(clock: WatchdogClock, intervalMs: number): Ticker {
  let byInterval = tickers.get(clock);
  if (!byInterval) tickers.set(clock, (byInterval = new Map()));
  let ticker = byInterval.get(intervalMs);
  if (!ticker) byInterval.set(intervalMs, (ticker = new Ticker(clock, intervalMs)));
  return ticker;
}

export function stalledError(policy: StallPolicy, source: string, method = 'GET'): RabbitError {
  const seconds = Math.round(policy.windowMs / 100) / 10;
  return new RabbitError(
    'STALLED',
    `${method} ${source} stalled: under ${policy.minBytesPerSecond} bytes/s for ${seconds} s (--speed-limit, --speed-time)`,
    { source, method },
  );
}
