import { RabbitError, isRabbitError } from '../core/errors.js';

/**
 * Why a request was abandoned when its signal fired. A signal aborted with a resource-class
 * RabbitError (the run's --max-duration: DEADLINE; an outage past its patience: SERVICE_DOWN)
 * ends just the requests in flight: each becomes a recorded failure of its resource, and the run
 * goes on to write what it has. Anything else (Ctrl-C, SIGTERM, a fatal error elsewhere) is an
 * interruption of the whole run.
 */
export function stopReason(signal: AbortSignal, source: string, method = 'GET'): RabbitError {
  const reason: unknown = signal.reason;
  if (isRabbitError(reason) && reason.errorClass === 'resource') {
    return new RabbitError(reason.code, `${method} ${source} was cut off: ${reason.message}`, {
      source,
      method,
      errorClass: 'resource',
    });
  }
  return new RabbitError('INTERRUPTED', 'interrupted', { source });
}
