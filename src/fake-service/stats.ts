/**
 * What the service saw, for tests and benchmarks: how many requests, where, how many at once, and
 * which statuses and faults they got.
 */
export interface FakeStats {
  requests: number;
  /** Path without query -> requests; empty when the service was started with `countPaths: false`. */
  byPath: Map<string, number>;
  /** Method -> requests, so a test can tell that nothing was written (no POST, PUT or DELETE). */
  byMethod: Map<string, number>;
  inFlight: number;
  peakInFlight: number;
  /**
   * Milliseconds with at least one request in flight, and the sum over time of the number in
   * flight: their quotient is how many a client kept in flight on average while it was busy
   * (a benchmark's view of the gaps a client leaves between a response and its next request).
   */
  busyMs: number;
  inFlightMs: number;
  /** Status sent -> responses. A 'reset' sends none and is not counted here. */
  statuses: Map<number, number>;
  faultsInjected: number;
  /** Off for million-resource accounts, where a count per path would be the biggest thing held. */
  countPaths: boolean;
  reset(): void;
}

export function createStats(countPaths = true): FakeStats {
  const stats: FakeStats = {
    requests: 0,
    byPath: new Map(),
    byMethod: new Map(),
    inFlight: 0,
    peakInFlight: 0,
    busyMs: 0,
    inFlightMs: 0,
    statuses: new Map(),
    faultsInjected: 0,
    countPaths,
    reset() {
      stats.requests = 0;
      stats.byPath.clear();
      stats.byMethod.clear();
      // Requests still running finish after the reset; the peak restarts from them.
      stats.peakInFlight = stats.inFlight;
      stats.busyMs = 0;
      stats.inFlightMs = 0;
      stats.statuses.clear();
      stats.faultsInjected = 0;
    },
  };
  return stats;
}

/** Counts a request in and returns the function that counts it out, exactly once. */
export function countRequest(stats: FakeStats, path: string, method = 'GET'): () => void {
  stats.requests++;
  if (stats.countPaths) stats.byPath.set(path, (stats.byPath.get(path) ?? 0) + 1);
  stats.byMethod.set(method, (stats.byMethod.get(method) ?? 0) + 1);
  accrue(stats);
  stats.inFlight++;
  stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    accrue(stats);
    stats.inFlight--;
  };
}

const lastChange = new WeakMap<FakeStats, number>();

/** Adds the time since the last change of `inFlight` to the busy and in-flight sums. */
function accrue(stats: FakeStats): void {
  const now = performance.now();
  const last = lastChange.get(stats);
  lastChange.set(stats, now);
  if (last === undefined || stats.inFlight === 0) return;
  stats.busyMs += now - last;
  stats.inFlightMs += (now - last) * stats.inFlight;
}

export function countStatus(stats: FakeStats, status: number): void {
  stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
}

/** Write requests the service received (answered or not): POST, PUT and DELETE. */
export function writeRequests(stats: FakeStats): number {
  return ['POST', 'PUT', 'DELETE'].reduce((sum, method) => sum + (stats.byMethod.get(method) ?? 0), 0);
}
