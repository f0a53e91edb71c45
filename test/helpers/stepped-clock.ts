import type { RunTimer } from '../../src/core/run-timer.js';

/** A run's clock that the test moves on by hand: `now`, and a one-shot timer whose timers fire only as `step` passes them. */
export interface SteppedClock {
  now(): number;
  timer: RunTimer;
  /** Moves the clock on by `ms`, firing each timer that falls due on the way, in the order they fall due. */
  step(ms: number): void;
  /** Timers armed and not yet fired or cancelled. */
  readonly pending: number;
}

export function steppedClock(): SteppedClock {
  let at = 0;
  const timers = new Set<{ due: number; fire: () => void }>();
  return {
    now: () => at,
    timer(ms, fire) {
      const timer = { due: at + ms, fire };
      timers.add(timer);
      return () => void timers.delete(timer);
    },
    step(ms) {
      const end = at + ms;
      for (;;) {
        const due = [...timers].filter((t) => t.due <= end).sort((a, b) => a.due - b.due)[0];
        if (!due) break;
        timers.delete(due);
        at = due.due;
        due.fire();
      }
      at = end;
    },
    get pending() {
      return timers.size;
    },
  };
}
