import { describe, expect, it } from 'vitest';
import type { ExportEvent } from '../../src/export/events.js';
import { ProgressTracker } from '../../src/progress/tracker.js';

const api = '/rabbit/api/';
const ok = (source: string, bytes = 100): ExportEvent => ({
  type: 'response',
  source: `${api}${source}`,
  status: 200,
  bytes,
  queued: 0,
  inFlight: 1,
});

function clock(): { now: () => number; advance: (ms: number) => void } {
  let at = 1_000_000;
  return { now: () => at, advance: (ms) => (at += ms) };
}

/** A prototype's whole subtree: metadata, three lists, and per page its metadata, two renderings and elements list. */
function prototypeEvents(id: string, pages: number): ExportEvent[] {
  const events = [
    ok(`prototypes/${id}.json`),
    ok(`prototypes/${id}/pages.json`),
    ok(`prototypes/${id}/layers.json`),
    ok(`prototypes/${id}/discussions.json`),
  ];
  for (let p = 1; p <= pages; p++) {
    for (const rest of [
      `pages/page${p}.json`,
      `pages/page${p}.html`,
      `pages/page${p}.png`,
      `pages/page${p}/elements.json`,
    ])
      events.push(ok(`prototypes/${id}/${rest}`));
  }
  return events;
}

describe('ProgressTracker', () => {
  it('knows nothing of the whole before the list of prototypes', () => {
    const c = clock();
    const tracker = new ProgressTracker(c.now);
    tracker.onEvent({ type: 'phase', phase: 'crawl' });
    tracker.onEvent(ok('prototypes.json'));
    expect(tracker.snapshot()).toMatchObject({
      phase: 'crawl',
      percent: null,
      total: null,
      done: 1,
      requests: 1,
      prototypesTotal: null,
      etaMs: null,
    });
  });

  it('gives percent and time left from the finished prototypes and the rate', () => {
    const c = clock();
    const tracker = new ProgressTracker(c.now);
    tracker.onEvent({ type: 'phase', phase: 'crawl' });
    tracker.onEvent(ok('prototypes.json'));
    tracker.onEvent({ type: 'prototypes-listed', ids: ['1', '2', '3', '4'] });
    // Two prototypes of 2 pages (12 resources each) in 10 s: 2.5 resources a second.
    for (const id of ['1', '2']) {
      for (const event of prototypeEvents(id, 2)) tracker.onEvent(event);
      tracker.onEvent({ type: 'prototype-done', id });
    }
    c.advance(10_000);
    const snap = tracker.snapshot();
    // 1 + 12 + 12 done; 2 unvisited at the average 12: 49 in all.
    expect(snap).toMatchObject({
      done: 25,
      total: 49,
      prototypesDone: 2,
      prototypesTotal: 4,
      requests: 25,
      bytes: 2500,
    });
    expect(snap.percent).toBeCloseTo((25 / 49) * 100, 6);
    expect(snap.requestsPerSecond).toBeCloseTo(2.5, 6);
    expect(snap.bytesPerSecond).toBeCloseTo(250, 6);
    expect(snap.etaMs).toBe(9600); // 24 left at 2.5 a second
  });

  it('counts bytes on the wire beside bytes stored: compressed answers take fewer, plain ones the same', () => {
    const tracker = new ProgressTracker(clock().now);
    tracker.onEvent({ ...ok('prototypes.json', 1000), wireBytes: 200 } as ExportEvent);
    tracker.onEvent(ok('prototypes/7.json', 50));
    expect(tracker.snapshot()).toMatchObject({ bytes: 1050, wireBytes: 250 });
  });

  it('counts copies and failures as done, 304s and assets not; retries and errors apart', () => {
    const tracker = new ProgressTracker(clock().now);
    tracker.onEvent({ type: 'prototypes-listed', ids: ['7'] });
    tracker.onEvent(ok('prototypes/7.json'));
    tracker.onEvent({
      type: 'response',
      source: `${api}prototypes/7/pages.json`,
      status: 304,
      bytes: 0,
      queued: 0,
      inFlight: 1,
    });
    tracker.onEvent({ type: 'reused', source: `${api}prototypes/7/pages.json`, bytes: 50 });
    tracker.onEvent({
      type: 'retry',
      source: `${api}prototypes/7/layers.json`,
      attempt: 1,
      delayMs: 10,
      reason: '503',
    });
    tracker.onEvent({ type: 'error', error: { source: `${api}prototypes/7/layers.json`, message: 'gone' } });
    tracker.onEvent({ type: 'response', source: '/static/site.css', status: 200, bytes: 10, queued: 0, inFlight: 1 });
    tracker.onEvent({ type: 'prototype-done', id: '7' });
    expect(tracker.snapshot()).toMatchObject({
      done: 3,
      total: 3,
      requests: 3,
      retries: 1,
      errors: 1,
      prototypesDone: 1,
    });
  });

  it('sizes prototypes from the previous archive, given before or after the list', () => {
    for (const order of ['before', 'after'] as const) {
      const tracker = new ProgressTracker(clock().now);
      const previous: ExportEvent = {
        type: 'previous',
        prototypes: [
          { id: '1', files: 30, bytes: 1, errors: 2, revision: 1, lastModification: 5 },
          { id: '9', files: 500, bytes: 1, errors: 0, revision: 1, lastModification: 5 }, // deleted since: not counted
        ],
      };
      if (order === 'before') tracker.onEvent(previous);
      tracker.onEvent({ type: 'prototypes-listed', ids: ['1', '2'] });
      if (order === 'after') tracker.onEvent(previous);
      // 32 for prototype 1 (30 files, 2 failed ones asked again); 2 is new: the previous average.
      expect(tracker.snapshot().total).toBe(32 + 32);
    }
  });

  it('never shows the percent going back, and 100 only when all is written', () => {
    const c = clock();
    const tracker = new ProgressTracker(c.now);
    tracker.onEvent({ type: 'phase', phase: 'crawl' });
    tracker.onEvent({ type: 'prototypes-listed', ids: ['1', '2'] });
    for (const event of prototypeEvents('1', 1)) tracker.onEvent(event);
    tracker.onEvent({ type: 'prototype-done', id: '1' });
    expect(tracker.snapshot().percent).toBeCloseTo(50, 6);
    const second = prototypeEvents('2', 3);
    for (const event of second.slice(0, 7)) tracker.onEvent(event);
    const before = tracker.snapshot().percent ?? 0;
    expect(before).toBeCloseTo((15 / 16) * 100, 6);
    // Prototype 2 outgrows its guess (prototype 1's size): the estimate grows by a page, the bar holds.
    tracker.onEvent(second[7] as ExportEvent);
    expect(tracker.snapshot()).toMatchObject({ done: 16, total: 24, percent: before });
    for (const event of second.slice(8)) tracker.onEvent(event);
    tracker.onEvent({ type: 'prototype-done', id: '2' });
    expect(tracker.snapshot().percent).toBe(99.9);
    tracker.onEvent({ type: 'phase', phase: 'requisites' });
    expect(tracker.snapshot()).toMatchObject({ percent: 99.9, etaMs: null });
    tracker.onEvent({ type: 'phase', phase: 'done' });
    expect(tracker.snapshot()).toMatchObject({ percent: 100, etaMs: 0 });
  });

  it('times each phase and the average rate', () => {
    const c = clock();
    const tracker = new ProgressTracker(c.now);
    tracker.onEvent({ type: 'phase', phase: 'crawl' });
    for (let i = 0; i < 90; i++) tracker.onEvent(ok(`prototypes/1/pages/page${i}.json`, 1024));
    c.advance(8000);
    tracker.onEvent({ type: 'phase', phase: 'requisites' });
    for (let i = 0; i < 10; i++)
      tracker.onEvent({
        type: 'response',
        source: `/static/${i}.css`,
        status: 200,
        bytes: 1024,
        queued: 0,
        inFlight: 1,
      });
    c.advance(2000);
    tracker.onEvent({ type: 'phase', phase: 'archive' });
    c.advance(500);
    tracker.onEvent({ type: 'phase', phase: 'done' });
    c.advance(9999);
    expect(tracker.phaseTimes()).toEqual({
      crawlMs: 8000,
      requisitesMs: 2000,
      writingMs: 500,
      requestsPerSecond: 10,
      bytesPerSecond: 10_240,
    });
  });
});
