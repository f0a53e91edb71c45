import { RankedStacks } from './ranked-stacks.js';

/**
 * Pending work and the slots it runs in. Tasks wait here and start only while fewer than
 * `concurrency` hold a slot, so exactly N run while work remains. A task may belong to a group
 * (a prototype) whose rank the crawl sets to what is left of it: tasks of no group start first
 * (the cheap lists that tell how big each prototype is, page assets), then the group of lowest
 * rank, so a run that must stop early (--max-duration) ends with whole prototypes, the smallest,
 * rather than a part of each. Within a group tasks are taken newest first: finishing a page's
 * subtree before starting the next keeps the frontier small for accounts with many thousands of
 * resources. Handlers enqueue follow-up tasks instead of awaiting them. The slots are a counter,
 * not p-limit: with all the waiting done here, p-limit only counted, at the cost of four promises
 * and as many turns of the microtask queue per task (docs/design.md).
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

/**
 * A task as a record whose class runs it: what the crawl schedules by the ten thousand (every
 * resource a list names waits here), at a few fields each rather than a closure and the context
 * it keeps alive.
 */
export interface TaskRecord {
  run(handOff: () => Promise<void>): Promise<void>;
}

/** The group of tasks added without one: ranked before every other. */
const FIRST = '';

export class Frontier {
  private readonly pending = new RankedStacks<Task | TaskRecord>();
  /** Tasks holding a slot: started, and neither ended nor handed off. */
  private active = 0;
  /** Slots: `current`, and `ahead` more while it is at its full value. */
  private slots: number;
  private failure: unknown;
  private idle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private stopped = false;
  private paused = false;
  /** Holds not yet released: an outage and a check of a refused key may hold at once. */
  private held = 0;
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
    this.slots = this.full + this.ahead;
    this.pending.rank(FIRST, -Infinity);
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
    this.slots = this.current + (this.current === this.full ? this.ahead : 0);
    this.pump();
  }

  /** Tasks running, at most `concurrency` (those ahead are waiting for a connection). */
  get running(): number {
    return Math.min(this.active, this.current);
  }

  get queued(): number {
    return this.pending.size;
  }

  /** Adds a task of `group` (see `rank`), or of none: those start before any group's. */
  add(task: Task | TaskRecord, group: string = FIRST): void {
    if (this.stopped) return;
    this.pending.push(group, task);
    this.pump();
  }

  /**
   * Where a group's tasks stand: the lowest rank starts first (0 until set). The crawl ranks a
   * prototype by the requests it expects are left of it, and forgets it once it is done.
   */
  rank(group: string, value: number): void {
    if (group !== FIRST) this.pending.rank(group, value);
  }

  forget(group: string): void {
    if (group !== FIRST) this.pending.forget(group);
  }

  /**
   * Starts nothing new until resumed, while running tasks finish: back-pressure from a consumer
   * that has fallen behind (the zip writer), so pending work waits here as small records rather
   * than as stored bodies piling up in front of it.
   */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /**
   * Starts nothing new while the service is gone (an outage) or a refused key is checked, apart
   * from `pause`: the zip writer catching up must not restart a crawl that waits for the service,
   * nor the other way round. Holds count: work starts again once each has been released.
   */
  hold(): void {
    this.held++;
  }

  release(): void {
    this.held = Math.max(0, this.held - 1);
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
    while (this.unfinished > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * Drop everything not yet started and refuse new tasks, but let the drain resolve as usual once
   * the running ones end (--max-duration: the run stops fetching, it does not fail).
   */
  halt(reason?: unknown): void {
    this.haltedBy ??= reason;
    this.stopped = true;
    this.pending.clear();
    this.pump();
  }

  /** Why it was halted, when the halter said (--max-duration's DEADLINE, an outage's SERVICE_DOWN). */
  haltedBy: unknown;

  /** True once halted or stopped: tasks added now are dropped. */
  get halted(): boolean {
    return this.stopped;
  }

  /** Drop everything not yet started and fail the drain (fatal error, interruption). */
  stop(reason: unknown): void {
    this.stopped = true;
    this.pending.clear();
    this.fail(reason);
  }

  /**
   * Runs work beside the tasks, in no slot and ahead of everything pending: work that makes no
   * request (the offline viewer's building during the crawl). Like a task, the drain waits for it,
   * its failure fails the drain, and nothing starts once stopped or halted.
   */
  beside(work: () => Promise<void>): void {
    if (this.stopped) return;
    this.unfinished++;
    queueMicrotask(() => {
      work().then(
        () => this.end(),
        (error: unknown) => this.end(error ?? new Error('work failed')),
      );
    });
  }

  private end(error?: unknown): void {
    this.unfinished--;
    if (error !== undefined) this.fail(error);
    this.pump();
  }

  private isIdle(): boolean {
    return this.pending.size === 0 && this.unfinished === 0;
  }

  private pump(): void {
    while (!this.stopped && !this.paused && this.held === 0 && this.pending.size > 0 && this.active < this.slots) {
      this.run(this.pending.pop() as Task | TaskRecord);
    }
    if (this.isIdle() && this.idle) {
      const { resolve } = this.idle;
      this.idle = undefined;
      resolve();
    }
  }

  /**
   * Starts a task in a slot, in a microtask of its own (a task that adds tasks as it starts does
   * not start them inside this one). The slot is given back once: at `handOff` or at the end.
   */
  private run(task: Task | TaskRecord): void {
    this.active++;
    this.unfinished++;
    this.peakRunning = Math.max(this.peakRunning, this.running);
    let holding = true;
    const leave = (): void => {
      if (!holding) return;
      holding = false;
      this.active--;
    };
    const handOff = (): Promise<void> => {
      leave();
      this.pump();
      return new Promise((resolve) => setImmediate(resolve));
    };
    const ended = (error?: unknown): void => {
      leave();
      this.end(error);
    };
    queueMicrotask(() => {
      // Stopped in the meantime: it counts as never started.
      if (this.stopped) ended();
      else
        (typeof task === 'function' ? task(handOff) : task.run(handOff)).then(
          () => ended(),
          (error: unknown) => ended(error ?? new Error('task failed')),
        );
    });
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
