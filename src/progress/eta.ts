/**
 * The time left as shown: the raw figure, (what is left) / (the recent rate), swings whenever the
 * estimate of the whole moves (a prototype finishes and resizes the rest) or the service answers
 * in bursts, and a figure that jumps from 5 minutes to 16 and back is one nobody can plan by.
 * The shown figure counts down with the clock, leans toward the raw one with a half-life, and
 * moves by at most `maxChange` of itself per update beyond the countdown. The time is passed in.
 */
export interface EtaState {
  /** When it was last updated (ms). */
  at: number;
  /** The time left shown then; null when none was. */
  ms: number | null;
}

export const ETA_DEFAULTS = {
  /** Half of the gap to the raw figure is closed in this long. */
  halfLifeMs: 10_000,
  /** The most the figure moves per update, as a share of what it was (less the time passed). */
  maxChange: 0.4,
  /** ...but at least this much, so a figure near zero can still grow when the work goes on. */
  minStepMs: 2_000,
} as const;

export function startEta(at: number): EtaState {
  return { at, ms: null };
}

/** The shown time left after the raw one became `rawMs` at time `at`; null raw means none to show. */
export function updateEta(
  state: EtaState,
  at: number,
  rawMs: number | null,
  options: Partial<Record<keyof typeof ETA_DEFAULTS, number>> = {},
): EtaState {
  const { halfLifeMs, maxChange, minStepMs } = { ...ETA_DEFAULTS, ...options };
  // Nothing to show (no rate yet, paused for an outage): the next figure starts afresh.
  if (rawMs === null) return { at, ms: null };
  if (state.ms === null) return { at, ms: rawMs };
  const elapsed = Math.max(0, at - state.at);
  const expected = Math.max(0, state.ms - elapsed);
  const weight = 1 - 2 ** (-elapsed / halfLifeMs);
  const leaning = expected + weight * (rawMs - expected);
  const step = Math.max(expected * maxChange, minStepMs);
  return { at, ms: Math.round(Math.min(expected + step, Math.max(expected - step, leaning, 0))) };
}
