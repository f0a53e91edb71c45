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
  /**
   * Tasks run beyond `concurrency` while it is at its full value, for a connection pool that
   * itself never sends more than `concurrency` requests at once: their requests wait in the pool's
   * queue, and a connection that frees sends the next one at once, inside undici, instead of after
   * the response that freed it has been handled here and a task has started. None by default.
   */
  ahead?: number;
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
  private readonly full: number;
  private readonly ahead: number;
  private current: number;
  /** The most tasks running at once, counting none of those `ahead`: the most requests in flight. */
  peakRunning = 0;

  constructor(options: FrontierOptions) {
    this.full = Math.max(1, options.concurrency);
    this.ahead = Math.max(0, options.ahead ?? 0);
    this.current = this.full;
    this.limit = pLimit(this.full + this.ahead);
  }

  /** Requests in flight at once: the configured concurrency, or less while adapting to throttling. */
  get concurrency(): number {
    return this.current;
  }

  /**
   * Lower or raise the number of tasks run at once (adaptive concurrency). Below the full value
   * none run ahead: the pool has idle connections then, and a task ahead would use one.
   */
  set concurrency(value: number) {
    this.current = Math.min(this.full, Math.max(1, Math.floor(value)));
    this.limit.concurrency = this.current + (this.current === this.full ? this.ahead : 0);
    this.pump();
  }

  /** Tasks running, at most `concurrency` (those ahead are waiting for a connection). */
  get running(): number {
    return Math.min(this.limit.activeCount, this.current);
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
          this.peakRunning = Math.max(this.peakRunning, this.running);
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
