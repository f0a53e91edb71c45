import { startEta, updateEta, type EtaState } from './eta.js';
import { halfLifeFor, startRate, timeLeftMs, updateRate, type RateState } from './rate.js';
import type { WorkProgress } from '../core/counted-work.js';

/** What a display shows of counted work at one moment. */
export interface WorkSnapshot {
  /** Null before the first report. */
  step: string | null;
  done: number;
  total: number | null;
  /** 0..100; null without a total. */
  percent: number | null;
  /** Units a second, smoothed; null until there is a rate. */
  perSecond: number | null;
  /** Null without a total or a rate. */
  etaMs: number | null;
  /** Since the tracker was made: the command's time so far, whatever step it is in. */
  elapsedMs: number;
}

/**
 * Folds the reports of counted work into the figures a person plans by, with the same rate and
 * time-left smoothing as the export's progress (rate.ts, eta.ts). A new step starts its rate and
 * time left afresh: the bodies of a package go at another pace than the digests read back. The
 * clock is passed in; nothing is printed here.
 */
export class WorkTracker {
  private readonly started: number;
  private step: string | null = null;
  private stepStarted: number;
  private rate: RateState;
  private eta: EtaState;

  constructor(private readonly now: () => number = Date.now) {
    this.started = now();
    this.stepStarted = this.started;
    this.rate = startRate(this.started);
    this.eta = startEta(this.started);
  }

  /** The figures once the work has come as far as `progress` says (undefined: no report yet). */
  sample(progress: WorkProgress | undefined): WorkSnapshot {
    const at = this.now();
    if (progress === undefined)
      return {
        step: null,
        done: 0,
        total: null,
        percent: null,
        perSecond: null,
        etaMs: null,
        elapsedMs: at - this.started,
      };
    // The first step began with the command (what it did before the first sample counts); a later
    // one is taken from where the sample that first saw it found it.
    if (progress.step !== this.step) {
      if (this.step !== null) {
        this.stepStarted = at;
        this.rate = startRate(at, progress.done);
        this.eta = startEta(at);
      }
      this.step = progress.step;
    }
    const smoothing = { halfLifeMs: halfLifeFor(at - this.stepStarted) };
    this.rate = updateRate(this.rate, at, progress.done, smoothing);
    const { done, total } = progress;
    const finished = total !== null && done >= total;
    const raw = total === null || finished ? null : timeLeftMs(total - done, this.perSecond(at, done));
    this.eta = updateEta(this.eta, at, raw, smoothing);
    return {
      step: progress.step,
      done,
      total,
      percent: total === null ? null : total === 0 || finished ? 100 : (done / total) * 100,
      perSecond: this.rate.perSecond,
      etaMs: finished ? 0 : total === null ? null : this.eta.ms,
      elapsedMs: at - this.started,
    };
  }

  /**
   * The smoothed rate; before it has a first window (a step's first second), the step's average so
   * far, so that a line written then still says how long is left.
   */
  private perSecond(at: number, done: number): number | null {
    if (this.rate.perSecond !== null) return this.rate.perSecond;
    const elapsed = at - this.stepStarted;
    return elapsed > 0 && done > this.rate.count ? ((done - this.rate.count) * 1000) / elapsed : null;
  }
}
