import type { Dispatcher } from 'undici';
import type { RunTimer } from '../core/run-timer.js';
import type { OutagePolicy } from './outage-policy.js';
import type { ProxySettings } from './proxy-env.js';
import type { RetryPolicy } from './retry-policy.js';
import type { SizeCaps } from './size-caps.js';
import type { StallPolicy } from './transfer-watchdog.js';

/**
 * How a command reaches the service and how hard it may press it: the one declaration of what
 * export (and backup), live check and restore share. Each command's options extend it; each fills
 * in its own defaults (a session is opened with them, service-session.ts).
 */
export interface ServiceOptions {
  baseUrl: string;
  /** One or more API keys; each prototype is read with the first key that can read it. */
  keys: readonly string[];
  /** Requests in flight at most (restore: reads; its writes go one at a time). */
  concurrency?: number;
  /** Connect, headers and body-idle timeout per request. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Requests per second at most. */
  maxRps?: number;
  /** Caps of the bodies the service sends, as decoded; a command refuses a kind it never reads. */
  caps?: Partial<SizeCaps>;
  /** Proxy settings, e.g. proxySettingsFromEnv(process.env); none connects directly. */
  proxy?: ProxySettings;
  /** Allow an http:// base URL to a host that is not loopback (the key in clear text). */
  allowInsecureHttp?: boolean;
  /** A dispatcher to use instead of the built-in pool (tests); whoever made it closes it. */
  dispatcher?: Dispatcher;
  /** Minimum transfer rate before a body counts as stalled; STALL_DEFAULTS otherwise. */
  stall?: Partial<StallPolicy>;
  /** How long one outage of the whole service is waited out (OUTAGE_DEFAULTS.patienceMs); 0 never pauses. */
  outagePatienceMs?: number;
  /** The rest of the outage policy (probe waits, what counts as an outage); tests shorten the waits. */
  outage?: Partial<OutagePolicy>;
  /** The caller's stop (Ctrl-C, SIGTERM): what makes a failure an interruption. */
  signal?: AbortSignal;
  now?: () => number;
  random?: () => number;
  /** How backoffs and an outage's probes wait; rejects when its signal aborts (tests pass a fake clock's). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /**
   * The timer of the run's limits that are not waits of its own (the first contact's, the stall
   * watchdog's checks), on the clock of `now`; the system's timers when absent. Tests pass the timer
   * of the clock whose `sleep` they pass, so that a skipped wait moves these limits on too.
   */
  timer?: RunTimer;
}

/** How requests reach the service: directly or through a proxy, and whether http:// may leave the machine. */
export interface Transport {
  proxy?: ProxySettings;
  allowInsecureHttp: boolean;
}
