/**
 * A stand-in for a timer that never fires by itself: every wait is recorded and held until the
 * test releases it. Code that waits can then be checked by counting (how many waits are pending
 * at once, for how long each asked) instead of by reading the wall clock.
 */
export interface SleepGate {
  sleep: (ms: number) => Promise<void>;
  /** Every wait asked for, in order, in milliseconds. */
  readonly asked: number[];
  /** Resolves once `count` waits are pending at the same time. */
  pending(count: number): Promise<void>;
  /** Ends every pending wait, and lets later waits end at once. */
  release(): void;
}

export function sleepGate(): SleepGate {
  const asked: number[] = [];
  const held: (() => void)[] = [];
  const watchers: { count: number; resolve: () => void }[] = [];
  let open = false;
  const notify = (): void => {
    for (const watcher of watchers.filter((w) => held.length >= w.count)) {
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve();
    }
  };
  return {
    asked,
    sleep(ms) {
      asked.push(ms);
      if (open) return Promise.resolve();
      return new Promise<void>((resolve) => {
        held.push(resolve);
        notify();
      });
    },
    pending(count) {
      return new Promise<void>((resolve) => {
        watchers.push({ count, resolve });
        notify();
      });
    },
    release() {
      open = true;
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

/**
 * A fake service's latency (its `sleep`, given a `latencyMs` longer than any test) that answers
 * every request at once until the test says which to hold: a run is caught in its middle, and stays
 * there while the test looks at it, moves a faked timer on, interrupts or kills it.
 */
export interface RequestHold {
  sleep: (ms: number) => Promise<void>;
  /** Holds the `nth` request from now on, the others answered at once; resolves once it is held. */
  one(nth: number): Promise<void>;
  /** Holds the `nth` request from now on and every one after it: the run stands still. */
  from(nth: number): Promise<void>;
  /** Lets every held request go, and every later one through at once. */
  release(): void;
}

export function requestHold(): RequestHold {
  /** Requests still to answer at once before the one held; 0 when none is to be held. */
  let left = 0;
  let holdLater = false;
  let holding = false;
  let reached = (): void => undefined;
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const arm = (nth: number, later: boolean): Promise<void> => {
    left = nth;
    holdLater = later;
    return new Promise<void>((resolve) => (reached = resolve));
  };
  return {
    sleep() {
      if (holding) return held;
      if (left === 0 || --left > 0) return Promise.resolve();
      holding = holdLater;
      reached();
      return held;
    },
    one: (nth) => arm(nth, false),
    from: (nth) => arm(nth, true),
    release() {
      holding = false;
      release();
    },
  };
}
