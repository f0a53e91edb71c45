import { RabbitError, isRabbitError } from '../core/errors.js';

/**
 * Why a request was abandoned when its signal fired. A signal aborted with a resource-class
 * RabbitError (the run's --max-duration: DEADLINE) ends just the requests in flight: each becomes
 * a recorded failure of its resource, and the run goes on to write its archive. Anything else
 * (Ctrl-C, SIGTERM, a fatal error elsewhere) is an interruption of the whole run.
 */
export function stopReason(signal: AbortSignal, source: string): RabbitError {
  const reason: unknown = signal.reason;
  if (isRabbitError(reason) && reason.errorClass === 'resource') {
    return new RabbitError(reason.code, `GET ${source} was cut off: ${reason.message}`, {
      source,
      method: 'GET',
      errorClass: 'resource',
    });
  }
  return new RabbitError('INTERRUPTED', 'interrupted', { source });
}
