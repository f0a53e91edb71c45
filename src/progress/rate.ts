/**
 * A smoothed rate of a growing counter (requests, bytes, resources): an exponentially weighted
 * moving average in time, so samples taken every 200 ms on a terminal and every 30 s in a log give
 * the same kind of figure. The time is passed in: no clock here, so a table can test it.
 */
export interface RateState {
  /** When the counter was last sampled (ms). */
  at: number;
  count: number;
  /** Per second; null until a first full warm-up window has passed. */
  perSecond: number | null;
}

export const RATE_DEFAULTS = {
  /** Half of a rate's weight is older than this: steady enough to plan by, quick to follow a change. */
  halfLifeMs: 10_000,
  /** The first rate is measured over at least this long; a first 50 ms says nothing. */
  warmUpMs: 1_000,
} as const;

export function startRate(at: number, count = 0): RateState {
  return { at, count, perSecond: null };
}

/** The rate after the counter reached `count` at time `at`. */
export function updateRate(
  state: RateState,
  at: number,
  count: number,
  options: Partial<Record<keyof typeof RATE_DEFAULTS, number>> = {},
): RateState {
  const { halfLifeMs, warmUpMs } = { ...RATE_DEFAULTS, ...options };
  const elapsed = at - state.at;
  if (elapsed <= 0) return state;
  if (state.perSecond === null && elapsed < warmUpMs) return state;
  const instant = ((count - state.count) * 1000) / elapsed;
  if (state.perSecond === null) return { at, count, perSecond: instant };
  const weight = 1 - 2 ** (-elapsed / halfLifeMs);
  return { at, count, perSecond: state.perSecond + weight * (instant - state.perSecond) };
}

/**
 * The half-life for a run that has gone on this long: short at first, so the rate of a run's first
 * minute is not dragged down by its slow start, and the full one once the run is long.
 */
export function halfLifeFor(elapsedMs: number, halfLifeMs: number = RATE_DEFAULTS.halfLifeMs): number {
  return Math.min(halfLifeMs, Math.max(RATE_DEFAULTS.warmUpMs, elapsedMs / 4));
}

/** Time left for `remaining` units at `perSecond`; null when the rate says nothing yet. */
export function timeLeftMs(remaining: number, perSecond: number | null): number | null {
  if (perSecond === null || !(perSecond > 0)) return null;
  return Math.round((Math.max(0, remaining) / perSecond) * 1000);
}
