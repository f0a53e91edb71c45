import { RabbitError, isRabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';

export function interrupted(): RabbitError {
  return new RabbitError('INTERRUPTED', 'the export was interrupted');
}

/**
 * What an export that failed throws: an interruption as such (whatever the abort broke on its way
 * out), anything else as it was, and nothing that carries a key: messages are scrubbed of every
 * key and api_key parameter.
 */
export function sanitize(error: unknown, secrets: readonly string[], aborted: boolean): unknown {
  if (aborted && !(isRabbitError(error) && error.errorClass === 'fatal' && error.code !== 'INTERRUPTED')) {
    return interrupted();
  }
  if (error instanceof Error) error.message = redactSecrets(error.message, secrets);
  return error;
}
