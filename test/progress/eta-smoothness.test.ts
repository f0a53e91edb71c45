import { describe, expect, it } from 'vitest';
import type { ExportEvent } from '../../src/export/events.js';
import { ProgressTracker } from '../../src/progress/tracker.js';
import { updateEta, startEta } from '../../src/progress/eta.js';

const api = '/rabbit/api/';
const ok = (source: string): ExportEvent => ({
  type: 'response',
  source: `${api}${source}`,
  status: 200,
  bytes: 100,
  queued: 0,
  inFlight: 1,
});

/** One prototype's resources in the order a crawl meets them: metadata, lists, then page by page. */
function resourcesOf(id: string, pages: number, perPage: number): ExportEvent[] {
  const events: ExportEvent[] = ['.json', '/pages.json', '/layers.json', '/discussions.json'].map((rest) =>
    ok(`prototypes/${id}${rest}`),
  );
  // Its list of pages has been read: how many it has is known from here on.
  events.splice(2, 0, { type: 'pages-listed', id, count: pages });
  for (let p = 1; p <= pages; p++) {
    events.push(ok(`prototypes/${id}/pages/page${p}.json`));
    for (let e = 1; e < perPage; e++) events.push(ok(`prototypes/${id}/pages/page${p}/elements/element${e}.json`));
  }
  return events;
}

interface Scenario {
  /** Pages of each prototype, crawled one after another: unlike sizes resize the estimate as each finishes. */
  pages: number[];
  perPage: number;
  /** Resources that arrive in the second starting at `second`. */
  rate: (second: number) => number;
  /** How often the display asks for a snapshot: the terminal's bar, a log. */
  everyMs: number;
}

const SCENARIOS: Array<[string, Scenario]> = [
  ['steady, alike prototypes', { pages: [20, 20, 20, 20, 20], perPage: 10, rate: () => 40, everyMs: 1000 }],
  ['steady, unlike prototypes', { pages: [2, 60, 5, 120, 3, 40], perPage: 12, rate: () => 50, everyMs: 1000 }],
  [
    'bursty answers, unlike prototypes',
    { pages: [3, 80, 4, 150, 10, 60], perPage: 10, rate: (s) => (s % 6 < 2 ? 200 : 4), everyMs: 1000 },
  ],
  [
    'bursts with silences, on a terminal',
    { pages: [1, 40, 2, 90, 30], perPage: 15, rate: (s) => (s % 10 === 0 ? 600 : 0), everyMs: 250 },
  ],
  ['a slow start then fast', { pages: [10, 10, 200, 10], perPage: 8, rate: (s) => (s < 20 ? 5 : 150), everyMs: 1000 }],
];

/** The time left every `everyMs` of a synthetic crawl, with the share of the work done then. */
function run(scenario: Scenario): Array<{ at: number; etaMs: number | null; fraction: number }> {
  let at = 1_000_000;
  const tracker = new ProgressTracker(() => at);
  const ids = scenario.pages.map((_, index) => String(index + 1));
  tracker.onEvent({ type: 'phase', phase: 'crawl' });
  tracker.onEvent(ok('prototypes.json'));
  tracker.onEvent({ type: 'prototypes-listed', ids });
  const queue: ExportEvent[] = [];
  ids.forEach((id, index) => {
    queue.push(...resourcesOf(id, scenario.pages[index] ?? 0, scenario.perPage), { type: 'prototype-done', id });
  });
  const total = queue.filter((event) => event.type === 'response').length;
  let done = 0;
  const samples: Array<{ at: number; etaMs: number | null; fraction: number }> = [];
  const tick = 50;
  for (let ms = 0; queue.length > 0; ms += tick) {
    const second = Math.floor(ms / 1000);
    // This tick's share of the second's resources (a rate of 600 in one tick of a second is a burst).
    const due = Math.round((scenario.rate(second) * tick) / 1000);
    for (let i = 0; i < due && queue.length > 0;) {
      const event = queue.shift() as ExportEvent;
      tracker.onEvent(event);
      if (event.type === 'response') {
        done++;
        i++;
      }
    }
    at += tick;
    if ((ms + tick) % scenario.everyMs === 0)
      samples.push({ at, etaMs: tracker.snapshot().etaMs, fraction: done / total });
  }
  return samples;
}

/** How far a time left moved beyond the clock's countdown, as a share of where the countdown put it. */
function swings(samples: ReturnType<typeof run>): Array<{ at: number; from: number; to: number; swing: number }> {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const before = samples[i - 1];
    const after = samples[i];
    if (!before || !after || before.etaMs === null || after.etaMs === null) continue;
    // The first tenth of the work may still be learning what the whole costs.
    if (before.fraction < 0.1) continue;
    const expected = Math.max(0, before.etaMs - (after.at - before.at));
    // Measured against at least 5 s: a figure of a few seconds moving by one or two is no swing to plan by.
    const swing = Math.abs(after.etaMs - expected) / Math.max(expected, 5_000);
    out.push({ at: after.at, from: before.etaMs, to: after.etaMs, swing });
  }
  return out;
}

describe('time left moves smoothly after the first tenth of the work', () => {
  it.each(SCENARIOS)('%s: no update swings it by more than half', (_, scenario) => {
    const samples = run(scenario);
    const checked = swings(samples);
    // The bound was checked where it matters: a run long enough to have many updates past the first tenth.
    expect(checked.length).toBeGreaterThan(5);
    expect(checked.filter((s) => s.swing > 0.5)).toEqual([]);
  });

  it('still follows the truth: a run that turns out twice as long is shown so within a minute', () => {
    let state = startEta(0);
    state = updateEta(state, 0, 600_000);
    for (let at = 1000; at <= 60_000; at += 1000) state = updateEta(state, at, 1_200_000 - at);
    expect(state.ms).toBeGreaterThan(0.9 * (1_200_000 - 60_000));
  });

  it('counts down with the clock when the raw figure agrees, and shows nothing when there is none', () => {
    let state = updateEta(startEta(0), 0, 100_000);
    state = updateEta(state, 10_000, 90_000);
    expect(state.ms).toBe(90_000);
    expect(updateEta(state, 11_000, null).ms).toBeNull();
  });
});
