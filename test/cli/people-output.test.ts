import { describe, expect, it } from 'vitest';
import { plural } from '../../src/cli/format.js';
import { logLine } from '../../src/cli/progress-line.js';
import type { ProgressSnapshot } from '../../src/progress/tracker.js';

describe('plural', () => {
  it.each([
    [0, 'archive', undefined, '0 archives'],
    [1, 'archive', undefined, '1 archive'],
    [2, 'resource', undefined, '2 resources'],
    [1, 'entry', 'entries', '1 entry'],
    [3, 'entry', 'entries', '3 entries'],
  ])('%i %s', (count, one, many, text) => {
    expect(plural(count, one, many)).toBe(text);
  });
});

describe('the last progress line of a log', () => {
  const last: ProgressSnapshot = {
    phase: 'archive',
    percent: 99,
    done: 192,
    total: 192,
    requests: 200,
    queued: 0,
    bytes: 4 * 1024 * 1024,
    wireBytes: 4 * 1024 * 1024,
    outage: null,
    // Nothing was fetched lately: the recent rate is unknown while the archive is written.
    requestsPerSecond: null,
    bytesPerSecond: null,
    etaMs: null,
    prototypesDone: 5,
    prototypesTotal: 5,
    retries: 0,
    errors: 0,
    elapsedMs: 4_000,
  };

  it('shows the rate over the run when the recent rate is unknown, never `--`', () => {
    const line = logLine(last);
    expect(line).toContain('50.0 req/s');
    expect(line).toContain('1.00 MiB/s');
    expect(line).not.toContain('-- req/s');
    // After the crawl nothing estimates the time left: it is left out, not shown as `--`.
    expect(line).not.toContain('--');
  });

  it('keeps the recent rate while there is one', () => {
    expect(logLine({ ...last, requestsPerSecond: 12, bytesPerSecond: 1024 * 1024 })).toContain('12.0 req/s');
  });
});
