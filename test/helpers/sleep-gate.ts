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
