import { withoutQueries } from './redact.js';

/**
 * Typed errors with a stable `code`. Tests and the CLI branch on codes, never on wording.
 *
 * Failures are grouped by what happens next (STYLE 4):
 *  - retryable: the request may succeed if tried again (429, 5xx, resets, timeouts, stalled, cut
 *    or empty bodies);
 *  - resource: one resource failed for good (or was cut off by --max-duration: DEADLINE, or by an
 *    outage longer than --outage-patience: SERVICE_DOWN); it is
 *    recorded in the manifest and the crawl goes on;
 *  - fatal: the run cannot continue (key refused, host unreachable, output unwritable).
 */
export type ErrorCode =
  | 'USAGE'
  | 'NO_API_KEY'
  | 'KEY_REFUSED'
  | 'HOST_UNREACHABLE'
  | 'HTTP_STATUS'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'STALLED'
  | 'DEADLINE'
  | 'SERVICE_DOWN'
  | 'BODY_TOO_LARGE'
  | 'BODY_TRUNCATED'
  | 'BODY_EMPTY'
  | 'BODY_UNDECODABLE'
  | 'UNKNOWN_CODING'
  | 'BAD_JSON'
  | 'BAD_SHAPE'
  | 'BAD_ID'
  | 'DUPLICATE_ENTRY'
  | 'OUTPUT_EXISTS'
  | 'OUTPUT_UNWRITABLE'
  | 'DISK_FULL'
  | 'INTERRUPTED'
  | 'NOT_A_ZIP'
  | 'ARCHIVE_CORRUPT'
  /** An entry a list or a manifest names that the archive does not hold (an incomplete export's, or a crafted one). */
  | 'ENTRY_MISSING'
  /** A package convert wrote (WACZ, bag) does not read back as written (`convert --check`). */
  | 'PACKAGE_INVALID'
  | 'LOCKED'
  // What a newcomer meets in the first minutes; src/cli/error-guide.ts gives each its next step.
  | 'CONNECTION_REFUSED'
  | 'PROXY_REFUSED'
  | 'PROXY_AUTH'
  | 'PROXY_FAILED'
  | 'HOST_NOT_FOUND'
  | 'TLS_CERTIFICATE'
  | 'WRONG_SCHEME'
  | 'NO_ANSWER'
  | 'API_NOT_FOUND'
  | 'BAD_BASE_URL'
  | 'API_KEY_FLAG'
  | 'KEY_FILE'
  | 'PORT_IN_USE'
  | 'OUTPUT_PARENT_MISSING'
  | 'OUTPUT_KIND'
  | 'UNSAFE_PATH'
  /** --prototype names an id the account or the archive does not hold. */
  | 'NO_SUCH_PROTOTYPE'
  /** restore's journal path names the archive, or a file that is not a restore journal; left as it is. */
  | 'NOT_A_JOURNAL';

export type ErrorClass = 'retryable' | 'resource' | 'fatal';

export interface RabbitErrorDetails {
  cause?: unknown;
  /** HTTP method of the request that failed, if any. */
  method?: string;
  /** HTTP status, if the server answered. */
  status?: number;
  /** API path; any query string (and with it any key) is cut off when the error is made. */
  source?: string;
  /** An offending id, for BAD_ID. */
  id?: string;
  /** Seconds or HTTP date from a Retry-After header, already parsed to milliseconds; the retry waits at least this. */
  retryAfterMs?: number;
  /** The zip entry the failure is about: an unsafe name in the directory, or a damaged entry. */
  entry?: string;
  /** What is wrong with `entry`, without the names the message puts around it. */
  reason?: string;
  errorClass?: ErrorClass;
  /** Machine-readable context for the --json error line (e.g. who holds a lock); never a secret. */
  data?: Readonly<Record<string, unknown>>;
}

export class RabbitError extends Error {
  readonly code: ErrorCode;
  readonly errorClass: ErrorClass;
  readonly method?: string;
  readonly status?: number;
  readonly source?: string;
  readonly id?: string;
  readonly retryAfterMs?: number;
  readonly entry?: string;
  readonly reason?: string;
  readonly data?: Readonly<Record<string, unknown>>;
  /** How many attempts were made before giving up; set once by the fetch loop that made them. */
  attempts?: number;

  constructor(code: ErrorCode, message: string, details: RabbitErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'RabbitError';
    this.code = code;
    this.errorClass = details.errorClass ?? defaultClass(code);
    if (details.method !== undefined) this.method = details.method;
    if (details.status !== undefined) this.status = details.status;
    if (details.source !== undefined) this.source = withoutQueries(details.source);
    if (details.id !== undefined) this.id = details.id;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.entry !== undefined) this.entry = details.entry;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.data !== undefined) this.data = details.data;
  }

  /** Notes how many attempts ended in this error, for the manifest; returns the error to throw. */
  after(attempts: number): this {
    this.attempts = attempts;
    return this;
  }
}

function defaultClass(code: ErrorCode): ErrorClass {
  switch (code) {
    case 'NETWORK':
    case 'TIMEOUT':
    case 'STALLED':
    case 'BODY_TRUNCATED':
    case 'BODY_EMPTY':
    case 'BODY_UNDECODABLE':
      return 'retryable';
    case 'HTTP_STATUS':
    case 'BODY_TOO_LARGE':
    case 'UNKNOWN_CODING':
    case 'BAD_JSON':
    case 'BAD_SHAPE':
    case 'BAD_ID':
    case 'DEADLINE':
    case 'SERVICE_DOWN':
      return 'resource';
    default:
      return 'fatal';
  }
}

export function isRabbitError(error: unknown, code?: ErrorCode): error is RabbitError {
  return error instanceof RabbitError && (code === undefined || error.code === code);
}

/**
 * The same failure with more context in its data, for a caller that knows what the thrower did not
 * (which archive a refused value came from): every other field, the stack and the cause, as it was.
 */
export function withData(error: RabbitError, data: Readonly<Record<string, unknown>>): RabbitError {
  const copy = Object.create(RabbitError.prototype, Object.getOwnPropertyDescriptors(error)) as RabbitError;
  Object.defineProperty(copy, 'data', {
    value: { ...error.data, ...data },
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}
