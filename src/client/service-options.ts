import type { RetryPolicy } from './retry-policy.js';

/** How a command reaches the service and how hard it may press it: shared by export (and backup) and restore. */
export interface ServiceOptions {
  baseUrl: string;
  /** One or more API keys; each prototype is read with the first key that can read it. */
  keys: readonly string[];
  /** Requests in flight at most (restore: reads; its writes go one at a time). */
  concurrency?: number;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  maxRps?: number;
}
