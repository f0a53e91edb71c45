import { RabbitError } from '../core/errors.js';
import { nextProbeAt, type OutagePolicy } from './outage-policy.js';

/**
 * A key revoked in the middle of a run. The service then answers 401 (or 403) to every request
 * that carries it, and a run that records each as one failed resource spends a request per
 * resource of the account on a dead key, which many services punish by locking the account. The
 * same answer also comes for one discussion the key may not read, which is no reason to stop: a
 * check request (the key's own list of prototypes) tells the two apart, with the crawl held (the
 * frontier's hold, as in an outage) so nothing new goes out with the key meanwhile.
 */

/** What a check of a key found: it still reads its list, it is refused, or the service did not say. */
export type KeyCheck = { verdict: 'works' } | { verdict: 'refused' } | { verdict: 'unsure'; answer: string };

/** A key the service stopped honouring during the run: which one (never its value) and since when. */
export interface KeyRefusal {
  /** 1-based position among the run's keys, for the CLI to name by the line or entry it came from. */
  keyNumber: number;
  /** When the first refused answer came back (ms since the epoch). */
  since: number;
  /** The run's number of the request it answered: how far the run had got. */
  request: number;
  status: number;
  source: string;
}

export interface KeyWatchOptions {
  keys: readonly string[];
  /** The outage's probe delays and patience, for a check the service does not answer. */
  policy: OutagePolicy;
  now: () => number;
  /** Rejects when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
  signal: AbortSignal;
  check: (key: string, signal: AbortSignal) => Promise<KeyCheck>;
  /** Start no new work while a key is checked (the crawl's one frontier), and start again after. */
  hold: () => void;
  release: () => void;
  /** A key was found refused; `everyKey` when no key that read anything in this run is left. */
  onRefused: (refusal: KeyRefusal, everyKey: boolean) => void;
}

interface Check {
  /** Requests numbered up to this had been sent when the check went out: its verdict covers them. */
  covers: number;
  done: boolean;
  settled: Promise<void>;
}

export const REFUSAL_STATUS: ReadonlySet<number> = new Set([401, 403]);

export class KeyWatch {
  private sent = 0;
  private readonly read = new Set<string>();
  private readonly refusals = new Map<string, KeyRefusal>();
  private readonly checks = new Map<string, Check>();

  constructor(private readonly options: KeyWatchOptions) {}

  /** A request goes out now: its number in the run. */
  sending(): number {
    return ++this.sent;
  }

  /** The service answered a request with `key` (200, 304): a refusal of it later is worth a check. */
  answered(key: string): void {
    this.read.add(key);
  }

  /** The key's refusal, once a check found it refused: nothing more is sent with it. */
  refusalOf(key: string): KeyRefusal | undefined {
    return this.refusals.get(key);
  }

  /** Every key refused during the run, in the order they were found. */
  get refused(): KeyRefusal[] {
    return [...this.refusals.values()];
  }

  /**
   * Request number `request` with `key` was answered 401 or 403: the key's refusal when the key
   * itself is refused, undefined when only this resource is (or the key never read anything: a
   * key refused from the start is the list of prototypes' to report). A check already made since
   * the request went out decides for it; otherwise one is made, at most one per key at a time.
   */
  async judge(key: string, request: number, status: number, source: string): Promise<KeyRefusal | undefined> {
    for (;;) {
      const known = this.refusals.get(key);
      if (known || !this.read.has(key) || this.options.signal.aborted) return known;
      let check = this.checks.get(key);
      if (check === undefined || (check.done && request > check.covers)) {
        check = this.startCheck(key, { since: this.options.now(), request, status, source });
      }
      await check.settled;
      if (!this.refusals.has(key) && request <= check.covers) return undefined;
    }
  }

  private startCheck(key: string, first: Omit<KeyRefusal, 'keyNumber'>): Check {
    this.options.hold();
    const check: Check = { covers: this.sent, done: false, settled: Promise.resolve() };
    check.settled = this.isRefused(key)
      .then((refused) => {
        if (!refused || this.options.signal.aborted) return;
        const refusal = { keyNumber: this.options.keys.indexOf(key) + 1, ...first };
        this.refusals.set(key, refusal);
        this.options.onRefused(
          refusal,
          [...this.read].every((read) => this.refusals.has(read)),
        );
      })
      .catch(() => undefined) // the run ended meanwhile: the requests waiting hear it from the signal
      .finally(() => {
        check.done = true;
        this.options.release();
      });
    this.checks.set(key, check);
    return check;
  }

  /** Checks until the service says; one that keeps not saying is waited for as an outage is, then let go. */
  private async isRefused(key: string): Promise<boolean> {
    const { policy, now, signal } = this.options;
    const started = now();
    for (let attempt = 1; ; attempt++) {
      const found = await this.options
        .check(key, signal)
        .catch((): KeyCheck => ({ verdict: 'unsure', answer: 'no answer' }));
      if (found.verdict !== 'unsure') return found.verdict === 'refused';
      const at = nextProbeAt(started, now(), attempt, policy);
      if (at === null) return false;
      await this.options.sleep(Math.max(0, at - now()), signal);
    }
  }
}

/** The words for a refusal: the key by its position, and since when. */
export function refusalWords(refusal: KeyRefusal): string {
  return (
    `the service refused API key number ${refusal.keyNumber} from ${new Date(refusal.since).toISOString()} on ` +
    `(request ${refusal.request} of this run, HTTP ${refusal.status} on ${refusal.source})`
  );
}

/** What is left undone with a refused key: recorded in the manifest, so the archive says it is incomplete. */
export function keyRefusedError(refusal: KeyRefusal, source?: string, what?: string): RabbitError {
  return new RabbitError('KEY_REFUSED', what ? `${what}: ${refusalWords(refusal)}` : refusalWords(refusal), {
    ...(source !== undefined ? { source } : {}),
    status: refusal.status,
    errorClass: 'resource',
    data: { keyNumber: refusal.keyNumber, since: refusal.since, request: refusal.request },
  });
}
