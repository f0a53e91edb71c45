import { setMaxListeners } from 'node:events';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { prototypeSourceFolderOf, sourceNameOf } from '../api/entry-paths.js';
import type { ArchiveModel } from '../manifest/archive-model.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import { formatDuration } from '../core/duration.js';

export { formatDuration, parseDuration } from '../core/duration.js';

/**
 * `--max-duration`: an unattended run that must end by a given time, like rclone's
 * --max-duration. When it expires the run stops fetching (requests in flight are abandoned, nothing
 * new starts) but is not interrupted: the archive is written with what was stored, and whatever
 * was left undone is recorded with a DEADLINE error, so the archive says it is incomplete and the
 * next `--since` (or the next night's backup) fetches only the rest. Ctrl-C is unchanged.
 */

/** The timer the deadline runs on; tests pass their own. */
export type DeadlineTimer = (ms: number, expire: () => void) => () => void;

const SYSTEM_TIMER: DeadlineTimer = (ms, expire) => {
  const timer = setTimeout(expire, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface DeadlineOptions {
  /** Undefined never expires (a deadline that is `stoppable` may still be stopped). */
  maxDurationMs?: number | undefined;
  /** Runs once, after the signal has fired, with the error of what is left undone. */
  onExpire: (undone: RabbitError) => void;
  timer?: DeadlineTimer | undefined;
  /** Whether `stopNow` may be called: the signal then exists even without `maxDurationMs`. */
  stoppable?: boolean;
}

export class Deadline {
  private readonly controller = new AbortController();
  private readonly cancelTimer: () => void;
  /** Why the run stopped fetching, when it was not the clock (an outage that outlasted its patience). */
  private reason: RabbitError | undefined;
  readonly maxDurationMs: number | undefined;
  private readonly onExpire: (undone: RabbitError) => void;
  private readonly stoppable: boolean;

  constructor(options: DeadlineOptions) {
    this.maxDurationMs = options.maxDurationMs;
    this.onExpire = options.onExpire;
    this.stoppable = options.stoppable ?? false;
    setMaxListeners(0, this.controller.signal);
    const { maxDurationMs } = options;
    const timer = options.timer ?? SYSTEM_TIMER;
    this.cancelTimer =
      maxDurationMs === undefined ? () => undefined : timer(maxDurationMs, () => this.stopNow(this.error()));
  }

  /**
   * Ends the fetching now, as the clock would, with `reason` (a resource-class error) for what is
   * left undone: requests in flight and work not started are recorded with its code.
   */
  stopNow(reason: RabbitError): void {
    if (this.expired) return;
    if (reason.code !== 'DEADLINE') this.reason = reason;
    this.controller.abort(reason);
    this.onExpire(this.error());
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** Stopped by --max-duration itself, not by `stopNow` with another reason. */
  get reached(): boolean {
    return this.expired && this.reason === undefined;
  }

  /** What requests listen to: the run's own signal, and this deadline when there is one. */
  requestSignal(run: AbortSignal): AbortSignal {
    if (this.maxDurationMs === undefined && !this.stoppable) return run;
    const both = AbortSignal.any([run, this.controller.signal]);
    // Every request in flight and every backoff listens on it.
    setMaxListeners(0, both);
    return both;
  }

  /** Whether `error` is this deadline cutting off the run (not a failure of the service). */
  cutOff(error: unknown): error is RabbitError {
    return this.expired && isRabbitError(error, this.reason?.code ?? 'DEADLINE');
  }

  cancel(): void {
    this.cancelTimer();
  }

  /** The error of what was left undone: DEADLINE, or the reason given to `stopNow`. */
  error(): RabbitError {
    if (this.reason) return new RabbitError(this.reason.code, this.reason.message, { errorClass: 'resource' });
    return new RabbitError('DEADLINE', `the run reached --max-duration ${formatDuration(this.maxDurationMs ?? 0)}`, {
      errorClass: 'resource',
    });
  }
}

/**
 * Records what the deadline (or a key refused mid-run) left undone: each prototype with work that
 * never started (or was never read at all) gets one error with the reason's code (DEADLINE,
 * SERVICE_DOWN, KEY_REFUSED), so its record says incomplete and the next run redoes it.
 */
export function recordUnfinished(
  model: ArchiveModel,
  unfinished: Iterable<[id: string, tasks: number]>,
  reason: RabbitError,
  onFailed?: (source: string, error: RabbitError) => void,
): void {
  for (const [id, tasks] of unfinished) {
    const read = model.hasPrototype(id);
    const source = read ? prototypeSourceFolderOf(id) : sourceNameOf('prototype', { prototype: id });
    const what = read
      ? `${tasks} request${tasks === 1 ? '' : 's'} of prototype ${id} did not start`
      : `prototype ${id} was not read`;
    recordDeadlineError(
      model,
      new RabbitError(reason.code, `${what}: ${reason.message}`, { source, errorClass: 'resource' }),
      onFailed,
    );
  }
}

/** One DEADLINE error in the manifest (and the error event), e.g. for a prototype list cut off. */
export function recordDeadlineError(
  model: ArchiveModel,
  error: RabbitError,
  onFailed?: (source: string, error: RabbitError) => void,
): void {
  const source = error.source ?? sourceNameOf('prototype-list', {});
  model.addError(manifestErrorOf(source, error));
  onFailed?.(source, error);
}
