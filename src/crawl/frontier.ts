import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Pending work feeding one limiter. Tasks wait here, not inside the limiter, and are handed over
 * only while fewer than `concurrency` are running, so exactly N run while work remains and the
 * limiter's own queue never grows. Tasks are taken newest first: finishing a page's subtree before
 * starting the next keeps the frontier small for accounts with many thousands of resources.
 * Handlers enqueue follow-up tasks instead of awaiting them; nesting limiters would deadlock.
 */
export interface FrontierOptions {
  concurrency: number;
}

/**
 * A task holds its slot until it ends, or until it calls `handOff`: the slot goes to the next task
 * at once and the rest of this one (storing what it fetched) runs in the event loop's next turn.
 * Responses that arrive together then send their next requests before any of them is stored,
 * instead of each waiting for the storing of those ahead of it.
 */
export type Task = (handOff: () => Promise<void>) => Promise<void>;

export class Frontier {
  private readonly limit: LimitFunction;
  private readonly pending: Task[] = [];
  private failure: unknown;
  private idle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private stopped = false;
  private paused = false;
  /** Tasks started and not yet ended, those that have handed off their slot included. */
  private unfinished = 0;
  peakRunning = 0;

  constructor(options: FrontierOptions) {
    this.limit = pLimit(Math.max(1, options.concurrency));
  }

  get concurrency(): number {
    return this.limit.concurrency;
  }

  /** Lower or raise the number of tasks run at once (adaptive concurrency). */
  set concurrency(value: number) {
    this.limit.concurrency = Math.max(1, Math.floor(value));
    this.pump();
  }

  get running(): number {
    return this.limit.activeCount;
  }

  get queued(): number {
    return this.pending.length + this.limit.pendingCount;
  }

  add(task: Task): void {
    if (this.stopped) return;
    this.pending.push(task);
    this.pump();
  }

  /**
   * Starts nothing new until resumed, while running tasks finish: back-pressure from a consumer
   * that has fallen behind (the zip writer), so pending work waits here as small closures rather
   * than as stored bodies piling up in front of it.
   */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Resolves when no task is pending or running; rejects with the first task failure. */
  drain(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.idle = { resolve, reject };
    });
  }

  /** Resolves once no task is running any more (after stop, before cleaning up after them). */
  async quiet(): Promise<void> {
    while (this.limit.activeCount > 0 || this.unfinished > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * Drop everything not yet started and refuse new tasks, but let the drain resolve as usual once
   * the running ones end (--max-duration: the run stops fetching, it does not fail).
   */
  halt(): void {
    this.stopped = true;
    this.pending.length = 0;
    this.limit.clearQueue();
    this.pump();
  }

  /** True once halted or stopped: tasks added now are dropped. */
  get halted(): boolean {
    return this.stopped;
  }

  /** Drop everything not yet started and fail the drain (fatal error, interruption). */
  stop(reason: unknown): void {
    this.stopped = true;
    this.pending.length = 0;
    this.limit.clearQueue();
    this.fail(reason);
  }

  private isIdle(): boolean {
    return this.pending.length === 0 && this.limit.activeCount === 0 && this.limit.pendingCount === 0 && this.unfinished === 0;
  }

  private pump(): void {
    while (
      !this.stopped &&
      !this.paused &&
      this.pending.length > 0 &&
      this.limit.activeCount + this.limit.pendingCount < this.limit.concurrency
    ) {
      this.run(this.pending.pop() as Task);
    }
    if (this.isIdle() && this.idle) {
      const { resolve } = this.idle;
      this.idle = undefined;
      resolve();
    }
  }

  private run(task: Task): void {
    if (this.stopped) {
      this.pump();
      return;
    }
    void this.limit(
      () =>
        new Promise<void>((leave) => {
          this.peakRunning = Math.max(this.peakRunning, this.limit.activeCount);
          this.unfinished++;
          const handOff = (): Promise<void> => {
            leave();
            return new Promise((resolve) => setImmediate(resolve));
          };
          const ended = (error?: unknown): void => {
            leave();
            this.unfinished--;
            if (error !== undefined) this.fail(error);
            this.pump();
          };
          task(handOff).then(() => ended(), (error: unknown) => ended(error ?? new Error('task failed')));
        }),
    ).then(() => this.pump());
  }

  private fail(error: unknown): void {
    if (this.failure === undefined) this.failure = error;
    if (this.idle) {
      const { reject } = this.idle;
      this.idle = undefined;
      reject(this.failure);
    }
  }
}
