import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { getAsset, isSea } from 'node:sea';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { textView } from './text-view.js';
import type { ViewFault } from './view-check.js';
import type { ViewReply, ViewRequest } from './view-messages.js';
import type { FoundReference } from './tree-references.js';

/** One page to make a view of, and how its references are resolved (in the caller's thread). */
export interface ViewJob {
  body: Buffer;
  contentType: string | null;
  viewPath: string;
  resolve(references: readonly FoundReference[]): (string | undefined)[];
}

export interface BuiltView {
  bytes: Buffer;
  /** Why the view was replaced by its text (view-check.ts), or that it could not be built at all. */
  fault?: ViewFault | { kind: 'not-built'; message: string };
}

export interface ViewBuilder {
  build(job: ViewJob): Promise<BuiltView>;
  /** Ends the threads; builds still under way fail. */
  close(): Promise<void>;
}

/**
 * Threads beside the one driving the crawl: one fewer than the cores, at least one, at most two
 * (a page is a few milliseconds of work; more threads would only take cores from the crawl and
 * the service it talks to).
 */
export function viewThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(2, cores - 1));
}

/**
 * A worker's heap: pages are parsed one or a few at a time, so a small young generation does; the
 * old generation's cap turns a page too large to parse into a failed view, never a crashed export.
 */
const WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 256 };

/** The name of the worker's bundle among the single executable's assets (scripts/package.mjs). */
const SEA_WORKER = 'view-worker.cjs';

/**
 * The worker's script: dist/site/view-worker.js once built, or its bundle carried by the single
 * executable; undefined when running from sources (tests), where views are built in the caller.
 * Reached through the parent folder: in dist/ this module is bundled into a chunk of dist/chunks/
 * (scripts/build.mjs), one folder deep as site/ is.
 */
function builtWorker(): WorkerScript | undefined {
  if (isSea()) return { source: getAsset(SEA_WORKER, 'utf8') };
  const url = new URL('../site/view-worker.js', import.meta.url);
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
}

/** A worker's script: a file, or (in the single executable) the text of its bundle. */
type WorkerScript = URL | { source: string };

/**
 * The largest page built in the calling thread when it may be (`inlineUpTo`). Parsing holds some
 * fifty times a page's size (a hostile 32 MiB page took 1.5 to 2 GiB of heap), and only a view
 * thread's capped heap turns a page too large to parse into a failed view rather than a crashed
 * export; the service's renderings are a few dozen KB.
 */
export const INLINE_VIEW_BYTES = 256 * 1024;

export interface ViewBuilderOptions {
  workerUrl?: WorkerScript;
  threads?: number;
  /**
   * Pages of at most this many bytes are built in the calling thread, larger ones in threads
   * started for the first of them: for where no request is left to delay (after the crawl).
   */
  inlineUpTo?: number;
  /**
   * The cap on each thread's old generation, in MiB (WORKER_LIMITS's by default): a test lowers it
   * so that a smaller hostile page reaches it.
   */
  threadHeapMb?: number;
}

/**
 * Page views built in worker threads (view-worker.ts) when the worker's script is there, in the
 * calling thread otherwise (the same two steps: tests running from sources, a bundled executable)
 * or when `threads` is 0; with `inlineUpTo`, in both by the page's size.
 */
export function openViewBuilder(options: ViewBuilderOptions = {}): ViewBuilder {
  const url = options.workerUrl ?? builtWorker();
  const threads = options.threads ?? viewThreads();
  if (url === undefined || threads === 0) return inlineBuilder();
  const limits =
    options.threadHeapMb === undefined
      ? WORKER_LIMITS
      : { ...WORKER_LIMITS, maxOldGenerationSizeMb: options.threadHeapMb };
  if (options.inlineUpTo === undefined) return new ViewPool(url, threads, limits);
  const inlineUpTo = options.inlineUpTo;
  const inline = inlineBuilder();
  let pool: ViewPool | undefined;
  return {
    build: (job) =>
      job.body.length <= inlineUpTo ? inline.build(job) : (pool ??= new ViewPool(url, threads, limits)).build(job),
    close: async () => pool?.close(),
  };
}

/**
 * Views built in the calling thread. The builder and its HTML parser are imported when the first
 * view is built, not when the export starts: they are a good part of its start-up, and a run may
 * build its first view long after its first request, or never.
 */
function inlineBuilder(): ViewBuilder {
  return {
    async build(job) {
      const { buildViewHere } = await import('./view-build.js');
      try {
        const { html, fault } = buildViewHere(job.body, job.contentType, job.viewPath, job.resolve);
        return { bytes: Buffer.from(html, 'utf8'), ...(fault ? { fault } : {}) };
      } catch (error) {
        // As a thread's failure is (view-worker.ts): a page nested deeper than the stack allows is
        // one view lost, never the export.
        return notBuiltView(error instanceof Error ? error.message : String(error));
      }
    },
    close: () => Promise.resolve(),
  };
}

interface Pending {
  job: ViewJob;
  done(view: BuiltView): void;
}

class ViewThread {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;

  constructor(script: WorkerScript, limits: ResourceLimits, onGone: (thread: ViewThread) => void) {
    this.worker =
      script instanceof URL
        ? new Worker(script, { resourceLimits: limits })
        : new Worker(script.source, { eval: true, resourceLimits: limits });
    // Held only while it has work: an idle pool never keeps the process alive.
    this.worker.unref();
    this.worker.on('message', (reply: ViewReply) => this.heard(reply));
    const gone = (message: string): void => {
      onGone(this);
      for (const pending of this.pending.values()) notBuilt(pending, message);
      this.pending.clear();
    };
    this.worker.on('error', (error) => gone(error.message));
    this.worker.on('exit', (code) => gone(`the view thread ended (exit ${code})`));
  }

  send(id: number, pending: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, pending);
    // A copy of exactly the body's bytes, handed over: a spool buffer may be a slice of a larger one.
    const body = new Uint8Array(pending.job.body);
    this.post({ op: 'prepare', id, body, contentType: pending.job.contentType }, [body.buffer]);
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private post(request: ViewRequest, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  private heard(reply: ViewReply): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    if (reply.op === 'references') {
      let resolved: (string | undefined)[] = [];
      try {
        resolved = pending.job.resolve(reply.references);
      } catch (error) {
        // Finished with every reference inert, so the thread lets the page go; the caller hears why.
        this.post({ op: 'finish', id: reply.id, resolved: [], viewPath: pending.job.viewPath });
        this.settle(reply.id);
        notBuilt(pending, error instanceof Error ? error.message : String(error));
        return;
      }
      this.post({ op: 'finish', id: reply.id, resolved, viewPath: pending.job.viewPath });
      return;
    }
    this.settle(reply.id);
    if (reply.op === 'failed') notBuilt(pending, reply.message);
    else {
      const bytes = Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength);
      pending.done({ bytes, ...(reply.fault ? { fault: reply.fault } : {}) });
    }
  }

  private settle(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }
}

/**
 * A page whose view could not be built (the build failed on it, or its thread ran out of memory):
 * it gets the plain notice, never nothing and never the page as it was.
 */
function notBuiltView(message: string): BuiltView {
  return { bytes: Buffer.from(textView(''), 'utf8'), fault: { kind: 'not-built', message } };
}

function notBuilt(pending: Pending, message: string): void {
  pending.done(notBuiltView(message));
}

class ViewPool implements ViewBuilder {
  private threads: ViewThread[] = [];
  private next = 0;
  private closed = false;

  constructor(
    private readonly url: WorkerScript,
    private readonly size: number,
    private readonly limits: ResourceLimits,
  ) {}

  build(job: ViewJob): Promise<BuiltView> {
    if (this.closed) return Promise.reject(new Error('internal: the view pool is closed'));
    const thread = this.leastBusy();
    return new Promise((done) => thread.send(++this.next, { job, done }));
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((thread) => thread.close()));
  }

  private leastBusy(): ViewThread {
    if (this.threads.length < this.size && this.threads.every((thread) => thread.pending.size > 0)) {
      const thread = new ViewThread(
        this.url,
        this.limits,
        (gone) => (this.threads = this.threads.filter((t) => t !== gone)),
      );
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }
}
