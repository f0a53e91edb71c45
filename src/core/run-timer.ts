/**
 * The timer of a run's clock. A command's waits go through its `sleep`; what is not a wait of its
 * own (the first contact's limit, the stall watchdog's checks, the progress display's lines) is
 * set on this, so that a test's clock that skips the waits moves those on with them, instead of
 * the test waiting them out on the wall.
 */

/** Calls `fire` once `ms` have passed on the run's clock; returns a cancel. */
export type RunTimer = (ms: number, fire: () => void) => () => void;

/** The system's timer, for a run given none. */
export const SYSTEM_TIMER: RunTimer = (ms, fire) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

/** Calls `tick` every `ms` on `timer` until the returned stop is called (by `tick` itself too). */
export function every(timer: RunTimer, ms: number, tick: () => void): () => void {
  let stopped = false;
  let cancel = (): void => undefined;
  // Armed again before the tick, so that a tick which stops the ticking cancels the next one.
  const arm = (): void => {
    cancel = timer(ms, () => {
      if (stopped) return;
      arm();
      tick();
    });
  };
  arm();
  return () => {
    stopped = true;
    cancel();
  };
}

/** `every` on the system's clock, for a run given no timer; never what keeps the process alive. */
export function systemEvery(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}
