import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { createProgress } from '../../src/cli/progress.js';
import {
  barLine,
  clockTime,
  logLine,
  outageDescription,
  outageText,
  outageLine,
  outageRecord,
  progressRecord,
  spokenDuration,
} from '../../src/cli/progress-line.js';
import { addRunLimitOptions, runLimitArgs, runLimitsOf, type RunLimitFlags } from '../../src/cli/run-limit-flags.js';
import type { ExportEvent } from '../../src/export/events.js';

// What a person (or a log parser) sees while the run waits for a service that went away (issue 27).

const SINCE = new Date(2026, 10, 25, 3, 12, 7).getTime(); // local time: the display shows the local clock

const events: ExportEvent[] = [
  { type: 'outage', state: 'started', since: SINCE, reason: 'unreachable', nextTryAt: SINCE + 1_000 },
  {
    type: 'outage',
    state: 'probe',
    since: SINCE,
    reason: 'unreachable',
    probes: 5,
    nextTryAt: SINCE + 51_000,
    answer: 'ECONNREFUSED',
  },
  { type: 'outage', state: 'back', since: SINCE, reason: 'unreachable', probes: 6, durationMs: 72_000 },
];

function sink(): { stream: NodeJS.WriteStream; text: () => string } {
  const written: string[] = [];
  return {
    stream: { write: (text: string) => written.push(text), isTTY: false } as unknown as NodeJS.WriteStream,
    text: () => written.join(''),
  };
}

describe('outage texts', () => {
  it.each([
    [0, '0 s'],
    [20_000, '20 s'],
    [60_000, '1 min'],
    [72_000, '1 min 12 s'],
    [3_900_000, '1 h 5 min'],
  ])('spokenDuration(%i) = %s', (ms, text) => {
    expect(spokenDuration(ms)).toBe(text);
  });

  it('names the local time of day', () => {
    expect(clockTime(SINCE)).toBe('03:12:07');
  });

  it('one line per event for a log', () => {
    expect(outageLine(events[0] as never, SINCE)).toBe(
      'service unreachable since 03:12:07, next try in 1 s; nothing is lost, the run waits',
    );
    expect(outageLine(events[1] as never, SINCE + 31_000)).toBe(
      'service unreachable since 03:12:07 (ECONNREFUSED), next try in 20 s; nothing is lost, the run waits',
    );
    expect(outageLine(events[2] as never, SINCE + 72_000)).toBe('service back after 1 min 12 s; resuming');
  });

  it('through a proxy, the paused line says so: the one away may be the proxy', () => {
    const status = { since: SINCE, reason: 'unreachable' as const, nextTryInMs: 20_000, proxy: '10.0.0.1:3128' };
    expect(outageText(status)).toBe(
      'service unreachable through the proxy 10.0.0.1:3128 since 03:12:07, next try in 20 s',
    );
    const { proxy: _proxy, ...direct } = status;
    expect(outageText(direct)).toBe('service unreachable since 03:12:07, next try in 20 s');
  });

  it('the summary line counts outages and their time, and says when the run gave up on one', () => {
    expect(outageDescription({ count: 0, totalMs: 0, gaveUp: false })).toBe('');
    expect(outageDescription({ count: 1, totalMs: 72_000, gaveUp: false })).toBe(
      'the service was away once, 1 min 12 s in all; the run waited for it\n',
    );
    expect(outageDescription({ count: 2, totalMs: 72_000, gaveUp: false })).toBe(
      'the service was away 2 times, 1 min 12 s in all; the run waited for each\n',
    );
    expect(outageDescription({ count: 1, totalMs: 5_000, gaveUp: true })).toBe(
      'the service was away once, 5 s in all; the run stopped waiting at --outage-patience\n',
    );
  });
});

describe('the progress display while paused', () => {
  it('plain lines: each outage event as it happens, and the progress line says paused', async () => {
    const out = sink();
    let now = SINCE;
    const progress = await createProgress('lines', out.stream, { intervalMs: 0, now: () => now });
    progress.onEvent(events[0] as ExportEvent);
    now = SINCE + 31_000;
    progress.onEvent(events[1] as ExportEvent);
    expect(logLine(progress.snapshot())).toContain('paused: service unreachable since 03:12:07, next try in 20 s');
    expect(barLine(progress.snapshot(), 100)).toContain('paused: service unreachable since 03:12:07, next try in 20 s');
    expect(progressRecord(progress.snapshot())['outage']).toEqual({
      reason: 'unreachable',
      since: new Date(SINCE).toISOString(),
      nextTrySeconds: 20,
    });
    now = SINCE + 72_000;
    progress.onEvent(events[2] as ExportEvent);
    expect(progress.snapshot().outage).toBeNull();
    expect(logLine(progress.snapshot())).not.toContain('paused');
    progress.stop();
    expect(out.text()).toContain('service unreachable since 03:12:07, next try in 1 s');
    expect(out.text()).toContain('(ECONNREFUSED), next try in 20 s');
    expect(out.text()).toContain('service back after 1 min 12 s');
  });

  it('--json with --stats-interval: one outage record per event on stdout, nothing on stderr', async () => {
    const err = sink();
    const out = sink();
    const progress = await createProgress('json', err.stream, { intervalMs: 0, stdout: out.stream, command: 'export' });
    for (const event of events) progress.onEvent(event);
    progress.stop();
    expect(err.text()).toBe('');
    const records = out
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const envelope = { type: 'outage', schemaVersion: 1, command: 'export' };
    expect(records).toEqual([
      { ...envelope, ...outageRecord(events[0] as never) },
      { ...envelope, ...outageRecord(events[1] as never) },
      { ...envelope, ...outageRecord(events[2] as never) },
    ]);
    expect(records[1]).toEqual({
      ...envelope,
      state: 'probe',
      reason: 'unreachable',
      since: new Date(SINCE).toISOString(),
      nextTryAt: new Date(SINCE + 51_000).toISOString(),
      answer: 'ECONNREFUSED',
      probes: 5,
    });
    expect(records[2]).toMatchObject({ state: 'back', durationSeconds: 72, probes: 6 });
  });
});

describe('--outage-patience', () => {
  function parse(args: string[]): RunLimitFlags {
    const command = addRunLimitOptions(
      new Command('export').exitOverride().configureOutput({ writeErr: () => undefined }),
    );
    command.parse(args, { from: 'user' });
    return command.opts<RunLimitFlags>();
  }

  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['0', 0],
    ['0s', 0],
  ])('%s is %i ms', (value, ms) => {
    const flags = parse(['--outage-patience', value]);
    expect(runLimitsOf(flags).outagePatienceMs).toBe(ms);
    // The resume hint repeats it.
    expect(runLimitArgs(flags)).toContain('--outage-patience');
  });

  it('the default is left to the core, and a bad value is a usage error', () => {
    expect(runLimitsOf(parse([]))).not.toHaveProperty('outagePatienceMs');
    expect(() => parse(['--outage-patience', 'soon'])).toThrow(/--outage-patience takes a duration/);
  });
});
