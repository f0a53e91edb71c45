import { isRabbitError } from '../core/errors.js';
import { redactSecrets, redactStrings } from '../core/redact.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { printable } from './format.js';
import { jsonRecord, type RecordCommand } from './json-records.js';
import { knownKeys } from './known-keys.js';
import { terminalJson } from './terminal-text.js';
import { nextStepFor } from './error-guide.js';
import type { ExportOptions } from '../export/export-options.js';

/**
 * What a long run waits on: backoffs and outage probes (`sleep`), --max-duration (`deadlineTimer`),
 * the first contact's limit and the stall watchdog (`timer`).
 */
export type RunClock = Pick<ExportOptions, 'now' | 'sleep' | 'deadlineTimer' | 'timer'>;

export interface CliIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  /** The system's clock unless a program running a command in-process passes its own. */
  clock?: RunClock;
}

/**
 * Runs a command's action and turns whatever it throws into one message and an exit code. With
 * --json (`json` names the command whose records these are) the failure is one summary record on
 * stdout too, so cron logs stay machine-readable. `after`
 * hears the exit code, and for a failure the summary line (printed or not), e.g. to ping a monitor.
 */
export async function runAction(
  io: CliIO,
  json: Exclude<RecordCommand, null> | false,
  action: () => Promise<number>,
  after?: (exitCode: number, failure?: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  let failure: Record<string, unknown> | undefined;
  try {
    process.exitCode = await action();
  } catch (thrown) {
    // A network failure in export's words and codes, whichever command met it.
    const error = (await import('../client/network-failure.js')).explainNetworkFailure(thrown);
    const code = exitCodeFor(error);
    const hide = secretHider(io.env);
    const message = hide(printable(error instanceof Error ? error.message : String(error)));
    const errorCode = isRabbitError(error) ? error.code : 'INTERNAL';
    const next = isRabbitError(error) ? nextStepFor(error) : undefined;
    // Machine-readable context the error carries (who holds a lock) goes beside the message.
    const data = isRabbitError(error) ? error.data : undefined;
    // One redaction for everything the failure says, on its one way out: stderr, --json and the ping.
    failure = redactStrings(
      failureRecord(json === false ? null : json, code, {
        ...data,
        code: errorCode,
        message,
        ...(next !== undefined ? { next } : {}),
      }),
      hide,
    ) as Record<string, unknown>;
    if (json !== false) io.stdout.write(`${terminalJson(failure)}\n`);
    io.stderr.write(`rabbit-export: ${message}\n`);
    // Printable as the message is: a path in a next step may hold what a terminal would obey.
    if (next !== undefined) io.stderr.write(`next: ${hide(printable(next))}\n`);
    if (!isRabbitError(error) && error instanceof Error && error.stack && io.env['RABBIT_DEBUG']) {
      io.stderr.write(`${hide(error.stack)}\n`);
    }
    process.exitCode = code;
  }
  if (after) await after(Number(process.exitCode), failure);
}

/**
 * What every error the CLI writes goes through, whichever command or parser it came from: every
 * key the process knows of (keys.ts), in each encoding the key scan knows, and URLs' api_key
 * parameters and credentials, replaced. A usage error can quote a key the user put in the wrong
 * place (`--concurrency $KEY`), before any command has read one.
 */
export function secretHider(env: NodeJS.ProcessEnv): (text: string) => string {
  // Asked each time: a key file read after the hider was made adds its keys.
  return (text) => redactSecrets(text, knownKeys(env));
}

/** The --json summary of a run that failed, whatever failed: one shape for every log reader. */
export function failureRecord(
  command: RecordCommand,
  exitCode: number,
  error: Record<string, unknown> & { code: string; message: string },
): Record<string, unknown> {
  return jsonRecord(command, 'summary', { ok: false, exitCode, error });
}

/**
 * SIGINT and SIGTERM abort the signal given to `task`; the task then stops its requests and
 * cleans up. A second signal, or a task that has not stopped within `graceMs`, exits at once:
 * the promise to the user is "stops within 5 s".
 */
export async function withInterrupts<T>(
  io: CliIO,
  task: (signal: AbortSignal) => Promise<T>,
  graceMs = 4_000,
): Promise<T> {
  const controller = new AbortController();
  let watchdog: NodeJS.Timeout | undefined;
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    io.stderr.write(`\nrabbit-export: ${name} received, stopping...\n`);
    controller.abort(new Error(name));
    watchdog = setTimeout(() => process.exit(EXIT.interrupted), graceMs);
    watchdog.unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await task(controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (watchdog) clearTimeout(watchdog);
  }
}
