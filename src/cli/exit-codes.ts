import { isRabbitError, type ErrorCode } from '../core/errors.js';

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  incomplete: 3,
  interrupted: 130,
} as const;

const USAGE_CODES: ReadonlySet<ErrorCode> = new Set([
  'USAGE',
  'NO_API_KEY',
  'OUTPUT_EXISTS',
  'OUTPUT_PARENT_MISSING',
  'OUTPUT_KIND',
  'BAD_BASE_URL',
  'API_KEY_FLAG',
  'KEY_FILE',
  'NO_SUCH_PROTOTYPE',
  'NOT_A_JOURNAL',
]);

/** The one place where an error becomes an exit code. */
export function exitCodeFor(error: unknown): number {
  if (!isRabbitError(error)) return EXIT.failed;
  if (error.code === 'INTERRUPTED') return EXIT.interrupted;
  if (USAGE_CODES.has(error.code)) return EXIT.usage;
  return EXIT.failed;
}
