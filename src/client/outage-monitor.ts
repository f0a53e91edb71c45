import { RabbitError } from '../core/errors.js';
import {
  extendStreak,
  judgeStreak,
  nextProbeAt,
  NO_STREAK,
  type OutagePolicy,
  type OutageSignal,
  type Streak,
  type Verdict,
} from './outage-policy.js';

/** Why the run paused: nothing answered, a gateway answered for it, or it asked everyone to wait. */
export type OutageReason = 'unreachable' | 'unavailable' | 'throttled';

export type OutageEvent =
  | { state: 'started'; since: number; reason: OutageReason; nextTryAt: number }
  | { state: 'probe'; since: number; reason: OutageReason; probes: number; nextTryAt: number; answer: string }
  | { state: 'back'; since: number; reason: OutageReason; probes: number; durationMs: number }
  | { state: 'gave-up'; since: number; reason: OutageReason; probes: number; durationMs: number };

/** What one probe found: an answer of the service (back), or a failure that still looks like the outage. */
export type ProbeResult = { back: true } | { back: false; signal: OutageSignal; answer: string; retryAfterMs?: number };

export interface OutageMonitorOptions {
  policy: OutagePolicy;
  now: () => number;
  /** Rejects when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** The run's signal (with --max-duration and the give-up in it): a pause never outlives it. */
  signal: AbortSignal;
  /** One cheap request that has answered before in this run (the list of prototypes). */
  probe: (signal: AbortSignal) => Promise<ProbeResult>;
  /** Start no new work while paused (the crawl's one frontier), and start again after. */
  hold: () => void;
  release: () => void;
  onEvent: (event: OutageEvent) => void;
  /** Patience spent: stop the run as --max-duration does, with this error for what is left. */
  giveUp: (error: RabbitError) => void;
}

interface Outage {
  since: number;
  reason: OutageReason;
  probes: number;
  failedProbes: number;
  retryAfterMs: number | undefined;
}

const REASONS: Record<OutageSignal, OutageReason> = {
  transport: 'unreachable',
  gateway: 'unavailable',
  throttle: 'throttled',
};

/**
 * Watches every request's outcome and pauses the whole run while the service is gone: the frontier
 * is held, one probe at a time goes out with a growing wait, and the requests that failed wait here
 * and are sent again once the service answers. The verdicts are outage-policy.ts's.
 */
export class OutageMonitor {
  private answeredOnce = false;
  private streak: Streak = NO_STREAK;
  private outage: Outage | undefined;
  private silentProbe = false;
  private readonly waiters = new Set<(confirmed: boolean) => void>();
  private readonly wakers = new Set<() => void>();
  private count = 0;
  private totalMs = 0;
  private gaveUp = false;

  constructor(private readonly options: OutageMonitorOptions) {}

  /** True while the run is paused. */
  get paused(): boolean {
    return this.outage !== undefined;
  }

  /** Outages this run had and their time in all (one still going counts up to now). */
  summary(): { count: number; totalMs: number; gaveUp: boolean } {
    const going = this.outage ? this.options.now() - this.outage.since : 0;
    return { count: this.count, totalMs: this.totalMs + going, gaveUp: this.gaveUp };
  }

  /** The service answered a request (any status but a gateway's or a throttle's). */
  answered(): void {
    this.answeredOnce = true;
    this.streak = NO_STREAK;
    if (this.outage) this.end();
  }

  /** A request failed in a way an outage would explain; `outage` means: wait for `waitForService`. */
  failed(source: string, signal: OutageSignal, retryAfterMs?: number): Verdict {
    if (this.outage) {
      this.noteRetryAfter(signal, retryAfterMs);
      return 'outage';
    }
    this.streak = extendStreak(this.streak, source, this.options.policy.distinctResources);
    const asksToWait = signal === 'throttle' && retryAfterMs !== undefined;
    const verdict = judgeStreak(this.streak, this.answeredOnce, this.options.policy, asksToWait);
    if (verdict === 'outage') this.begin(signal, retryAfterMs);
    else if (verdict === 'probe') this.probeSilently();
    return verdict;
  }

  /**
   * Resolves once the service answers again (at once when it is not paused), with whether a failed
   * probe confirmed the outage; rejects when the run's signal aborts.
   */
  waitForService(signal: AbortSignal): Promise<boolean> {
    if (!this.outage) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      const done = (confirmed: boolean): void => {
        signal.removeEventListener('abort', aborted);
        resolve(confirmed);
      };
      const aborted = (): void => {
        this.waiters.delete(done);
        reject(signal.reason);
      };
      this.waiters.add(done);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  /**
   * A resource's own backoff, cut short when an outage begins meanwhile: true if it was (the
   * caller then waits for the service, and the attempt is not held against the resource).
   */
  async backoff(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.outage) return true;
    const cut = new AbortController();
    let begun = false;
    const wake = (): void => {
      begun = true;
      cut.abort();
    };
    this.wakers.add(wake);
    try {
      await this.options.sleep(ms, AbortSignal.any([signal, cut.signal]));
    } catch (error) {
      if (!begun) throw error;
    } finally {
      this.wakers.delete(wake);
    }
    return begun;
  }

  private noteRetryAfter(signal: OutageSignal, retryAfterMs: number | undefined): void {
    if (this.outage && signal === 'throttle' && retryAfterMs !== undefined)
      this.outage.retryAfterMs = Math.max(this.outage.retryAfterMs ?? 0, retryAfterMs);
  }

  private begin(signal: OutageSignal, retryAfterMs: number | undefined): void {
    const since = this.options.now();
    this.outage = { since, reason: REASONS[signal], probes: 0, failedProbes: 0, retryAfterMs: undefined };
    this.noteRetryAfter(signal, retryAfterMs);
    this.count++;
    this.options.hold();
    for (const wake of [...this.wakers]) wake();
    void this.probeUntilBack(this.outage);
  }

  private end(): void {
    const outage = this.outage as Outage;
    const durationMs = this.options.now() - outage.since;
    this.outage = undefined;
    this.streak = NO_STREAK;
    this.totalMs += durationMs;
    this.options.onEvent({
      state: 'back',
      since: outage.since,
      reason: outage.reason,
      probes: outage.probes,
      durationMs,
    });
    for (const done of [...this.waiters]) done(outage.failedProbes > 0);
    this.waiters.clear();
    this.options.release();
  }

  /** One probe at a time, each after a longer wait, until the service answers or patience runs out. */
  private async probeUntilBack(outage: Outage): Promise<void> {
    const { policy, now, signal } = this.options;
    let first = true;
    for (;;) {
      const at = nextProbeAt(outage.since, now(), outage.probes + 1, policy, outage.retryAfterMs);
      if (at === null) return this.giveUp(outage);
      if (first) this.options.onEvent({ state: 'started', since: outage.since, reason: outage.reason, nextTryAt: at });
      first = false;
      outage.retryAfterMs = undefined;
      try {
        await this.options.sleep(Math.max(0, at - now()), signal);
      } catch {
        return; // the run ended (--max-duration, Ctrl-C): the waiting requests hear it from the signal
      }
      if (this.outage !== outage) return; // a request in flight got an answer meanwhile
      outage.probes++;
      const result = await this.options
        .probe(signal)
        .catch((): ProbeResult => ({ back: false, signal: 'transport', answer: 'no answer' }));
      if (this.outage !== outage || signal.aborted) return;
      if (result.back) return this.answered();
      outage.failedProbes++;
      outage.reason = REASONS[result.signal];
      this.noteRetryAfter(result.signal, result.retryAfterMs);
      const next = nextProbeAt(outage.since, now(), outage.probes + 1, policy, outage.retryAfterMs);
      if (next === null) return this.giveUp(outage);
      this.options.onEvent({
        state: 'probe',
        since: outage.since,
        reason: outage.reason,
        probes: outage.probes,
        nextTryAt: next,
        answer: result.answer,
      });
    }
  }

  private giveUp(outage: Outage): void {
    this.gaveUp = true;
    const durationMs = this.options.now() - outage.since;
    this.options.onEvent({
      state: 'gave-up',
      since: outage.since,
      reason: outage.reason,
      probes: outage.probes,
      durationMs,
    });
    // A throttled service did answer, all the while: it kept asking to wait.
    const away = outage.reason === 'throttled' ? 'still asked to wait after' : 'did not answer for';
    const error = new RabbitError(
      'SERVICE_DOWN',
      `the service ${away} ${Math.round(durationMs / 1000)} s (--outage-patience ${Math.round(this.options.policy.patienceMs / 1000)} s)`,
      { errorClass: 'resource' },
    );
    // Stays paused: the run stops, and the waiting requests end with this error through the signal.
    this.options.giveUp(error);
  }

  /** A streak all of one resource: ask the service something else, once at a time, to tell which it is. */
  private probeSilently(): void {
    if (this.silentProbe) return;
    this.silentProbe = true;
    void this.options
      .probe(this.options.signal)
      .catch((): ProbeResult => ({ back: false, signal: 'transport', answer: 'no answer' }))
      .then((result) => {
        if (this.options.signal.aborted) return;
        if (result.back) this.answered();
        else this.failed(PROBE_SOURCE, result.signal, result.retryAfterMs);
      })
      .finally(() => {
        this.silentProbe = false;
      });
  }
}

/** The streak's name for the probe's own failures: a resource apart from every real one. */
const PROBE_SOURCE = '\0probe';
