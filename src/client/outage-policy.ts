import type { RabbitError } from '../core/errors.js';

/**
 * When a run stops asking and waits for the service as a whole, and how it waits. Pure functions
 * with their defaults in one block (STYLE 5); outage-monitor.ts holds the state they decide on.
 *
 * A deploy or a restart takes the whole service away for seconds to minutes: every request fails
 * the same way at once. Spending each resource's retries on that records the whole window as
 * failed; a pause that resends those requests afterwards loses nothing.
 */
export const OUTAGE_DEFAULTS = {
  /** How long one outage is waited out before the run gives up (exit 3, resumable). 0: never pause. */
  patienceMs: 10 * 60_000,
  /** Failures in a row, with no answer between them, before the service counts as gone. */
  failuresInARow: 3,
  /** ... and over at least this many different resources: one bad resource is not an outage. */
  distinctResources: 2,
  /** First wait before a probe; each probe that fails doubles it. */
  firstProbeDelayMs: 1_000,
  /** No wait between probes is longer than this. */
  maxProbeDelayMs: 30_000,
  /** A Retry-After for everyone is honoured up to this per probe; a longer ask is cut to it. */
  maxRetryAfterMs: 60_000,
} as const;

export type OutagePolicy = { [K in keyof typeof OUTAGE_DEFAULTS]: number };

/**
 * What a failure says about the service as a whole. `transport`: nothing answered (refused,
 * reset, DNS, timeout, a body cut short); `gateway`: a proxy answered for a service behind it that
 * did not (502, 503, 504); `throttle`: the service asks everyone to wait (429, or 503 with
 * Retry-After). Anything else (500, 404, a stalled body) is the resource's own problem.
 */
export type OutageSignal = 'transport' | 'gateway' | 'throttle';

const TRANSPORT_CODES = new Set(['NETWORK', 'TIMEOUT', 'BODY_TRUNCATED']);
const GATEWAY_STATUS = new Set([502, 503, 504]);

export function outageSignalOf(failure: Pick<RabbitError, 'code' | 'status' | 'retryAfterMs'>): OutageSignal | null {
  if (TRANSPORT_CODES.has(failure.code)) return 'transport';
  if (failure.code !== 'HTTP_STATUS' || failure.status === undefined) return null;
  if (failure.status === 429) return 'throttle';
  if (failure.status === 503 && failure.retryAfterMs !== undefined) return 'throttle';
  if (GATEWAY_STATUS.has(failure.status)) return 'gateway';
  return null;
}

/** Whether a status answered to a probe means the service is back (anything but a gateway or a throttle). */
export function answersAsService(status: number): boolean {
  return status !== 429 && !GATEWAY_STATUS.has(status);
}

/** The failures since the service last answered: how many, and which resources. */
export interface Streak {
  failures: number;
  sources: ReadonlySet<string>;
}

export const NO_STREAK: Streak = { failures: 0, sources: new Set() };

/**
 * One more failure. Only as many resources are kept as the verdict needs (`enough`): a streak that
 * never ends in a pause (--outage-patience 0) must not grow with every resource of the account.
 */
export function extendStreak(streak: Streak, source: string, enough = Infinity): Streak {
  const add = !streak.sources.has(source) && streak.sources.size < enough;
  return { failures: streak.failures + 1, sources: add ? new Set([...streak.sources, source]) : streak.sources };
}

/**
 * `outage`: enough failures over enough resources, none answered between: pause the run.
 * `probe`: as many failures, but all of one resource (one request in flight, --concurrency 1):
 * ask another one to tell a bad resource from a gone service. `go-on`: the resource's own retry
 * policy decides. Before the service has answered once in this run nothing pauses: a wrong
 * --base-url fails fast, as it always did.
 *
 * The exception is a failure that `asksToWait` (a Retry-After on a 429 or 503) before any answer:
 * the service was reached and said when to come back, and that answer to the one request in flight
 * (the list of prototypes) is all the run knows of it. Left to the retry policy it would be slept
 * through, up to a minute at a time, unseen and past --outage-patience; as an outage it is waited
 * out like one later in the run.
 */
export type Verdict = 'outage' | 'probe' | 'go-on';

export function judgeStreak(streak: Streak, answeredOnce: boolean, policy: OutagePolicy, asksToWait = false): Verdict {
  if (policy.patienceMs <= 0) return 'go-on';
  if (!answeredOnce) return asksToWait ? 'outage' : 'go-on';
  if (streak.failures < policy.failuresInARow) return 'go-on';
  return streak.sources.size >= policy.distinctResources ? 'outage' : 'probe';
}

/**
 * Wait before probe number `probe` (1-based) of an outage: doubling from the first delay up to the
 * cap; a Retry-After the service gave for everyone is a floor, itself capped.
 */
export function probeDelay(probe: number, policy: OutagePolicy, retryAfterMs?: number): number {
  const backoff = Math.min(policy.maxProbeDelayMs, policy.firstProbeDelayMs * 2 ** Math.max(0, probe - 1));
  if (retryAfterMs === undefined) return backoff;
  return Math.max(backoff, Math.min(policy.maxRetryAfterMs, retryAfterMs));
}

/**
 * When the next probe may go: never past the outage's patience (the last probe is made at the
 * moment patience runs out, so a service back just in time is not missed). Null when patience is
 * already spent.
 */
export function nextProbeAt(
  outageStartedAt: number,
  now: number,
  probe: number,
  policy: OutagePolicy,
  retryAfterMs?: number,
): number | null {
  const giveUpAt = outageStartedAt + policy.patienceMs;
  if (now >= giveUpAt) return null;
  return Math.min(giveUpAt, now + probeDelay(probe, policy, retryAfterMs));
}
