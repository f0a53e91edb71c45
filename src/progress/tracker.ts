import { API_PREFIX } from '../api/paths.js';
import type { ExportEvent, PreviousCost } from '../export/events.js';
import type { OutageReason } from '../client/outage-monitor.js';
import { estimateTotal, shownFraction, type PrototypeTally } from './estimate.js';
import { halfLifeFor, startRate, timeLeftMs, updateRate, type RateState } from './rate.js';
import { startEta, updateEta, type EtaState } from './eta.js';
import { parseSource } from '../api/entry-paths.js';

/** What a progress display shows at one moment; every figure a person plans by. */
export interface ProgressSnapshot {
  phase: Phase | 'starting';
  /** 0..100, held rather than going back; null until the list of prototypes is known. */
  percent: number | null;
  /** Resources obtained (fetched, copied or failed) and the estimated whole. */
  done: number;
  total: number | null;
  /** HTTP responses and their body bytes. */
  requests: number;
  /** Requests the crawl knows it must make and has not started yet (its queue). */
  queued: number;
  bytes: number;
  /** The same bodies as they came over the wire: fewer than `bytes` when the service compressed them. */
  wireBytes: number;
  requestsPerSecond: number | null;
  bytesPerSecond: number | null;
  /** Null when no rate is known yet, or outside the crawl (no estimate of the rest there). */
  etaMs: number | null;
  prototypesDone: number;
  prototypesTotal: number | null;
  retries: number;
  errors: number;
  elapsedMs: number;
  /** While the run is paused for an outage: since when (epoch ms), why, and how long to the next probe. */
  outage: OutageStatus | null;
}

export interface OutageStatus {
  since: number;
  reason: OutageReason;
  nextTryInMs: number;
  /** host:port of the proxy the run goes through: the one unreachable may be the proxy. */
  proxy?: string;
}

export type Phase = Extract<ExportEvent, { type: 'phase' }>['phase'];

/** Wall time per phase of a finished export, and its average rate over the requests. */
export interface PhaseTimes {
  crawlMs: number;
  requisitesMs: number;
  writingMs: number;
  requestsPerSecond: number;
  bytesPerSecond: number;
}

/**
 * Folds export events into the figures of a snapshot. The clock is passed in; nothing is printed
 * here. Memory is one small record per prototype, never per resource.
 */
export class ProgressTracker {
  private phase: Phase | 'starting' = 'starting';
  private readonly phaseStarted = new Map<Phase, number>();
  private readonly started: number;
  private tallies: Map<string, PrototypeTally> | null = null;
  private previous = new Map<string, number>();
  private other = 0;
  private requests = 0;
  private queued = 0;
  private bytes = 0;
  private wireBytes = 0;
  private retries = 0;
  private errors = 0;
  private prototypesDone = 0;
  private outage: { since: number; reason: OutageReason; nextTryAt: number } | null = null;
  private proxyHost: string | undefined;
  private shown: number | null = null;
  private requestRate: RateState;
  private byteRate: RateState;
  private doneRate: RateState;
  private eta: EtaState;

  constructor(private readonly now: () => number = Date.now) {
    this.started = now();
    this.requestRate = startRate(this.started);
    this.byteRate = startRate(this.started);
    this.doneRate = startRate(this.started);
    this.eta = startEta(this.started);
  }

  /** host:port of the proxy the run goes through, from its start: the one away in an outage may be the proxy. */
  get proxy(): string | undefined {
    return this.proxyHost;
  }

  onEvent(event: ExportEvent): void {
    switch (event.type) {
      case 'response':
        this.requests++;
        this.queued = event.queued;
        this.bytes += event.bytes;
        this.wireBytes += event.wireBytes ?? event.bytes;
        // A 304 is followed by the copy it vouches for ('reused'), or by a plain request.
        if (event.status === 200) this.count(event.source);
        break;
      case 'reused':
        this.count(event.source);
        break;
      case 'retry':
        this.retries++;
        break;
      case 'error':
        this.errors++;
        this.count(event.error.source);
        break;
      case 'prototypes-listed':
        this.tallies = new Map(event.ids.map((id) => [id, this.tallyFor(id)]));
        break;
      case 'previous':
        this.previous = new Map(event.prototypes.map((cost: PreviousCost) => [cost.id, cost.files + cost.errors]));
        for (const [id, tally] of this.tallies ?? []) this.withPrevious(id, tally);
        break;
      case 'pages-listed': {
        const tally = this.tallies?.get(event.id);
        if (tally) tally.pagesListed = event.count;
        break;
      }
      case 'prototype-done': {
        const tally = this.tallies?.get(event.id);
        if (tally && !tally.finished) {
          tally.finished = true;
          this.prototypesDone++;
        }
        break;
      }
      case 'start':
        this.proxyHost = event.proxy;
        break;
      case 'outage':
        this.outage =
          event.state === 'started' || event.state === 'probe'
            ? { since: event.since, reason: event.reason, nextTryAt: event.nextTryAt }
            : null;
        break;
      case 'phase':
        this.phase = event.phase;
        if (!this.phaseStarted.has(event.phase)) this.phaseStarted.set(event.phase, this.now());
        break;
      default:
        break;
    }
  }

  snapshot(): ProgressSnapshot {
    const at = this.now();
    const estimate = estimateTotal({ other: this.other, prototypes: this.tallies?.values() ?? null });
    const smoothing = { halfLifeMs: halfLifeFor(at - this.started) };
    this.requestRate = updateRate(this.requestRate, at, this.requests, smoothing);
    this.byteRate = updateRate(this.byteRate, at, this.bytes, smoothing);
    this.doneRate = updateRate(this.doneRate, at, estimate.done, smoothing);
    this.shown = shownFraction(this.shown, estimate.fraction);
    const crawling = this.phase === 'crawl' || this.phase === 'starting';
    const finished = this.phase === 'done';
    // Paused for an outage: no rate tells how long the rest takes.
    const rawEta =
      !this.outage && crawling && estimate.total !== null && estimate.fraction !== null
        ? timeLeftMs(estimate.total - estimate.done, this.doneRate.perSecond)
        : null;
    this.eta = updateEta(this.eta, at, rawEta, smoothing);
    return {
      phase: this.phase,
      // Page requisites and the last of the zip come after the crawl: 100 only when all is written.
      percent: finished ? 100 : this.shown === null ? null : Math.min(99.9, this.shown * 100),
      done: estimate.done,
      total: estimate.total,
      requests: this.requests,
      queued: this.queued,
      bytes: this.bytes,
      wireBytes: this.wireBytes,
      requestsPerSecond: this.requestRate.perSecond,
      bytesPerSecond: this.byteRate.perSecond,
      etaMs: finished ? 0 : this.eta.ms,
      prototypesDone: this.prototypesDone,
      prototypesTotal: this.tallies?.size ?? null,
      retries: this.retries,
      errors: this.errors,
      elapsedMs: at - this.started,
      outage: this.outage && {
        since: this.outage.since,
        reason: this.outage.reason,
        nextTryInMs: Math.max(0, this.outage.nextTryAt - at),
        ...(this.proxyHost ? { proxy: this.proxyHost } : {}),
      },
    };
  }

  /** Durations of the phases seen so far (a phase still running counts up to now). */
  phaseTimes(): PhaseTimes {
    const at = this.now();
    const start = (phase: Phase): number | undefined => this.phaseStarted.get(phase);
    const span = (from: Phase, ...to: Phase[]): number => {
      const begin = start(from);
      if (begin === undefined) return 0;
      const end = to.map(start).find((value) => value !== undefined) ?? at;
      return Math.max(0, end - begin);
    };
    const crawlMs = span('crawl', 'requisites', 'archive', 'done');
    const requisitesMs = span('requisites', 'archive', 'done');
    const writingMs = span('archive', 'done');
    const seconds = Math.max(0.001, (crawlMs + requisitesMs) / 1000);
    return {
      crawlMs,
      requisitesMs,
      writingMs,
      requestsPerSecond: round(this.requests / seconds),
      bytesPerSecond: Math.round(this.bytes / seconds),
    };
  }

  private count(source: string): void {
    const parsed = parseSource(source);
    const id = parsed?.prototype;
    const tally = id === undefined ? undefined : this.tallies?.get(id);
    if (!tally) {
      if (source.startsWith(API_PREFIX)) this.other++;
      return;
    }
    tally.done++;
    if (parsed?.kind === 'page') tally.pages++;
  }

  private tallyFor(id: string): PrototypeTally {
    return this.withPrevious(id, { done: 0, pages: 0, finished: false });
  }

  private withPrevious(id: string, tally: PrototypeTally): PrototypeTally {
    const files = this.previous.get(id);
    if (files !== undefined) tally.previous = files;
    return tally;
  }
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
