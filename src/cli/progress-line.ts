import type { OutageStatus, ProgressSnapshot } from '../progress/tracker.js';
import type { OutageEvent } from '../client/outage-monitor.js';
import type { ExportResult } from '../export/export-options.js';
import type { PhaseTimes } from '../progress/tracker.js';
import { mib, plural } from './format.js';

/** Pure text for the progress display; src/cli/progress.ts decides where and when it goes. */

/** 3 s, 4m05s, 2h05m, 3d04h: as short as a person reads it at a glance. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

const PHASE_NAMES: Record<ProgressSnapshot['phase'], string> = {
  starting: 'starting',
  crawl: 'crawl',
  requisites: 'requisites',
  archive: 'writing',
  done: 'done',
};

function percentText(s: ProgressSnapshot): string {
  return s.percent === null ? '--%' : `${Math.floor(s.percent)}%`;
}

function countText(s: ProgressSnapshot): string {
  return s.total === null
    ? `${s.done}`
    : `${s.done}/${s.phase === 'crawl' || s.phase === 'starting' ? '~' : ''}${s.total}`;
}

function rate(perSecond: number | null, digits = 0): string {
  return perSecond === null ? '--' : perSecond.toFixed(digits);
}

function left(s: ProgressSnapshot): string {
  return s.etaMs === null ? '--' : duration(s.etaMs);
}

/** What the errors count: resources the export could not get (each recorded in the manifest). */
function failed(s: ProgressSnapshot): string {
  return `${s.errors} ${s.errors === 1 ? 'resource' : 'resources'} failed`;
}

function prototypes(s: ProgressSnapshot): string {
  return `${s.prototypesDone}/${s.prototypesTotal ?? '?'}`;
}

/** `1 min 12 s`, `45 s`, `2 h 5 min`: how long the service was gone, in words a log reader skims. */
export function spokenDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}

/** 03:12:07, the local time of day a person compares with their own clock and their deploy logs. */
export function clockTime(epochMs: number): string {
  const at = new Date(epochMs);
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

const OUTAGE_WORDS: Record<OutageStatus['reason'], string> = {
  unreachable: 'service unreachable',
  unavailable: 'service unavailable',
  throttled: 'service asks to wait',
};

/**
 * `service unreachable since 03:12:07, next try in 20 s`: the run is paused, not stuck. Through a
 * proxy, `service unreachable through the proxy 10.0.0.1:3128 ...`: the one away may be the proxy.
 */
export function outageText(outage: OutageStatus): string {
  return `${outageWords(outage.reason, outage.proxy)} since ${clockTime(outage.since)}, next try in ${spokenDuration(outage.nextTryInMs)}`;
}

function outageWords(reason: OutageStatus['reason'], proxy: string | undefined): string {
  return proxy === undefined ? OUTAGE_WORDS[reason] : `${OUTAGE_WORDS[reason]} through the proxy ${proxy}`;
}

/** One line per outage event for a log (and the terminal above the bar). */
export function outageLine(event: OutageEvent, now: number, proxy?: string): string {
  const since = clockTime(event.since);
  switch (event.state) {
    case 'started':
    case 'probe':
      return `${outageWords(event.reason, proxy)} since ${since}${event.state === 'probe' ? ` (${event.answer})` : ''}, next try in ${spokenDuration(event.nextTryAt - now)}; nothing is lost, the run waits`;
    case 'back':
      return `service back after ${spokenDuration(event.durationMs)}; resuming`;
    case 'gave-up':
      return `${outageWords(event.reason, proxy)} since ${since}: gave up after ${spokenDuration(event.durationMs)} (--outage-patience); writing what was fetched`;
  }
}

/**
 * A wait shorter than this is not told: backoffs of a few hundred milliseconds pass unseen, and a
 * line each would bury the run's own lines under a burst of them.
 */
export const TOLD_WAIT_MS = 1_000;

/**
 * `PUT /rabbit/api/prototypes/3/pages/page0001/elements/element7.json answered 429: trying again in
 * 1 min`: one request waits its backoff (Retry-After a floor), told as the wait begins. The source is
 * printed as it is given; the caller makes it printable.
 */
export function waitLine(event: { method: string; source: string; delayMs: number; reason: string }): string {
  const why = /^\d+$/.test(event.reason) ? `answered ${event.reason}` : `failed (${event.reason})`;
  return `${event.method} ${event.source} ${why}: trying again in ${spokenDuration(event.delayMs)}`;
}

/** The fields of the `--json` outage record of an event, times as ISO dates. */
export function outageRecord(event: OutageEvent): Record<string, unknown> {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    state: event.state,
    reason: event.reason,
    since: iso(event.since),
    ...(event.state === 'started' || event.state === 'probe' ? { nextTryAt: iso(event.nextTryAt) } : {}),
    ...(event.state === 'probe' ? { answer: event.answer } : {}),
    ...(event.state !== 'started' ? { probes: event.probes } : {}),
    ...(event.state === 'back' || event.state === 'gave-up'
      ? { durationSeconds: Math.round(event.durationMs / 1000) }
      : {}),
  };
}

/**
 * The terminal line, at most `columns` wide: `crawl 45% [#####-----] 1234/~2740 85 req/s
 * 2.1 MiB/s 3m05s left 3/12 prototypes 2 retries 0 errors`. On a narrow terminal the bar shrinks,
 * then the least needed figures go; percent and time left go last.
 */
export function barLine(s: ProgressSnapshot, columns: number): string {
  // Paused: rates and time left mean nothing now; what the run waits for does.
  if (s.outage)
    return fittedLine(
      [{ text: `${PHASE_NAMES[s.phase]} ${percentText(s)} paused: ${outageText(s.outage)}`, keep: 1 }],
      null,
      columns,
    );
  const parts: LinePart[] = [
    { text: PHASE_NAMES[s.phase], keep: 4 },
    { text: percentText(s), keep: 10 },
    { text: BAR, keep: 3 },
    { text: countText(s), keep: 7 },
    { text: `${rate(s.requestsPerSecond)} req/s`, keep: 6 },
    { text: `${rate(s.bytesPerSecond === null ? null : s.bytesPerSecond / (1024 * 1024), 1)} MiB/s`, keep: 2 },
    { text: `${left(s)} left`, keep: 9 },
    { text: `${prototypes(s)} prototypes`, keep: 5 },
    { text: `${s.retries} retries`, keep: s.retries > 0 ? 2 : 1 },
    { text: failed(s), keep: s.errors > 0 ? 8 : 1 },
  ];
  return fittedLine(parts, s.percent, columns);
}

/** Where a line's bar goes among its parts. */
export const BAR = '\0';
const MIN_BAR = 12;

/** A part of a progress line, and how much it is wanted: the least wanted goes first for want of room. */
export interface LinePart {
  text: string;
  keep: number;
}

/**
 * The parts of a progress line in `columns`: the least needed left out until the line fits, the
 * bar (`BAR`, `percent` of it filled) then taking what room is left.
 */
export function fittedLine(parts: readonly LinePart[], percent: number | null, columns: number): string {
  const widthOf = (list: readonly LinePart[]): number =>
    list.reduce((sum, part) => sum + (part.text === BAR ? MIN_BAR : part.text.length), 0) +
    Math.max(0, list.length - 1);
  let shown = parts;
  while (shown.length > 1 && widthOf(shown) > columns) {
    const drop = shown.reduce((min, part) => (part.keep < min.keep ? part : min));
    shown = shown.filter((part) => part !== drop);
  }
  const inner = Math.min(30, MIN_BAR - 2 + columns - widthOf(shown));
  const filled = Math.floor(((percent ?? 0) / 100) * inner);
  const line = shown
    .map((part) => (part.text === BAR ? `[${'#'.repeat(filled)}${'-'.repeat(inner - filled)}]` : part.text))
    .join(' ');
  return line.length <= columns ? line : line.slice(0, Math.max(0, columns));
}

/**
 * The rate over the whole run so far: once requests stop (writing the archive, the log's last
 * line), the recent rate has nothing to measure, and the log's reader wants a figure, not `--`.
 */
function overall(perSecond: number | null, total: number, elapsedMs: number): number | null {
  if (perSecond !== null) return perSecond;
  return elapsedMs > 0 && total > 0 ? total / (elapsedMs / 1000) : null;
}

/**
 * The plain line for logs, every figure named. The time left is left out after the crawl, where
 * nothing estimates it (the requisites and the zip are quick), rather than shown as `--`.
 */
export function logLine(s: ProgressSnapshot): string {
  const requestRate = overall(s.requestsPerSecond, s.requests, s.elapsedMs);
  const byteRate = overall(s.bytesPerSecond, s.bytes, s.elapsedMs);
  const crawling = s.phase === 'crawl' || s.phase === 'starting';
  const timeLeft = s.etaMs !== null ? `${duration(s.etaMs)} left, ` : crawling ? 'time left not known yet, ' : '';
  const waiting = crawling || s.phase === 'requisites' ? `${plural(s.queued, 'request')} not started, ` : '';
  return (
    `progress: ${PHASE_NAMES[s.phase]} ${percentText(s)}, ${countText(s)} resources, ` +
    `${rate(requestRate, 1)} req/s, ${rate(byteRate === null ? null : byteRate / (1024 * 1024), 2)} MiB/s, ` +
    `${timeLeft}${prototypes(s)} prototypes, ${plural(s.requests, 'request')} made, ${waiting}` +
    `${storedText(s.bytes, s.wireBytes)}, ${s.retries} retries, ${failed(s)}, ` +
    `${duration(s.elapsedMs)} elapsed${s.outage ? `; paused: ${outageText(s.outage)}` : ''}`
  );
}

/**
 * The log's last line, once all is written: what was done, at what average rate, in how long.
 * No percent and no time left: there is none left.
 */
export function finalLine(s: ProgressSnapshot, times: PhaseTimes): string {
  return (
    `progress: done, ${s.done} resources, ${plural(s.requests, 'request')} made, ` +
    `${times.requestsPerSecond.toFixed(1)} req/s and ${(times.bytesPerSecond / (1024 * 1024)).toFixed(2)} MiB/s on average, ` +
    `${prototypes(s)} prototypes, ${storedText(s.bytes, s.wireBytes)}, ${s.retries} retries, ${failed(s)}, ` +
    `${duration(s.elapsedMs)} elapsed`
  );
}

/** `50.0 MiB`, or `50.0 MiB stored, 9.8 MiB on the wire` when the service compressed what it sent. */
export function storedText(stored: number, wire: number): string {
  return wire === stored ? mib(stored) : `${mib(stored)} stored, ${mib(wire)} on the wire`;
}

/** The fields of one `--json` progress record. */
export function progressRecord(s: ProgressSnapshot): Record<string, unknown> {
  return {
    phase: s.phase,
    percent: s.percent === null ? null : Math.round(s.percent * 10) / 10,
    done: s.done,
    total: s.total,
    requests: s.requests,
    requestsNotStarted: s.queued,
    bytes: s.bytes,
    wireBytes: s.wireBytes,
    requestsPerSecond: s.requestsPerSecond === null ? null : Math.round(s.requestsPerSecond * 10) / 10,
    bytesPerSecond: s.bytesPerSecond === null ? null : Math.round(s.bytesPerSecond),
    etaSeconds: s.etaMs === null ? null : Math.round(s.etaMs / 1000),
    prototypesDone: s.prototypesDone,
    prototypesTotal: s.prototypesTotal,
    retries: s.retries,
    errors: s.errors,
    elapsedSeconds: Math.round(s.elapsedMs / 1000),
    outage: s.outage && {
      reason: s.outage.reason,
      since: new Date(s.outage.since).toISOString(),
      nextTrySeconds: Math.round(s.outage.nextTryInMs / 1000),
    },
  };
}

/** `crawl 12.3 s, requisites 1.0 s, writing 0.2 s; 85.2 req/s, 2.10 MiB/s on average` for the summary. */
export function phaseLine(times: PhaseTimes): string {
  const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  return (
    `crawl ${sec(times.crawlMs)}, requisites ${sec(times.requisitesMs)}, writing ${sec(times.writingMs)}; ` +
    `${times.requestsPerSecond.toFixed(1)} req/s, ${(times.bytesPerSecond / (1024 * 1024)).toFixed(2)} MiB/s on average`
  );
}

type Outages = ExportResult['outages'];

/** The summary's account of outages: how many, the time paused in all, and whether the run gave up waiting. */
export function outageSummary(outages: Outages): { count: number; totalSeconds: number; gaveUp: boolean } {
  return { count: outages.count, totalSeconds: Math.round(outages.totalMs / 1000), gaveUp: outages.gaveUp };
}

/**
 * `the service was away 2 times, 1 min 12 s in all; the run waited for it`, or, when the last
 * outage outlasted --outage-patience, that the run gave up on it (nothing when there was none).
 */
export function outageDescription(outages: Outages): string {
  if (outages.count === 0) return '';
  const times = outages.count === 1 ? 'once' : `${outages.count} times`;
  const end = outages.gaveUp
    ? 'the run stopped waiting at --outage-patience'
    : `the run waited for ${outages.count === 1 ? 'it' : 'each'}`;
  return `the service was away ${times}, ${spokenDuration(outages.totalMs)} in all; ${end}\n`;
}
