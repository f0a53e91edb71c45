import { RabbitError, isRabbitError } from '../core/errors.js';
import { redactSecrets, redactStrings } from '../core/redact.js';

export function interrupted(): RabbitError {
  return new RabbitError('INTERRUPTED', 'the export was interrupted');
}

/**
 * What an export that failed throws: an interruption as such (whatever the abort broke on its way
 * out), anything else as it was, and nothing that carries a key: messages, and the context an error
 * carries beside them (the URL it failed on, which `--json` prints), are scrubbed of every key and
 * api_key parameter.
 */
export function sanitize(error: unknown, secrets: readonly string[], aborted: boolean): unknown {
  if (aborted && !(isRabbitError(error) && error.errorClass === 'fatal' && error.code !== 'INTERRUPTED')) {
    return interrupted();
  }
  if (error instanceof Error) error.message = redactSecrets(error.message, secrets);
  if (isRabbitError(error) && error.data !== undefined)
    Object.assign(error, { data: redactStrings(error.data, (text) => redactSecrets(text, secrets)) });
  return error;
}
