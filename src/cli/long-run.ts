import { RabbitError, isRabbitError } from '../core/errors.js';
import { EXIT } from './exit-codes.js';
import { runAction, withInterrupts, type CliIO, type RunClock } from './run.js';
import type { ProgressReporter } from './progress.js';
import type { ServiceFlags } from './service-flags.js';
import type { FlagServiceOptions } from './service-options.js';
import { monitorFlagsOf, type MonitorFlags } from './monitor-flags.js';
import type { MetricsLabel } from '../monitor/metrics.js';
import type { RunMonitor } from './run-monitor.js';
import { jsonRecord } from './json-records.js';
import { terminalJson } from './terminal-text.js';

/** The flags every long-running command (`export`, `backup`) has besides the service flags. */
export interface LongRunFlags extends ServiceFlags, MonitorFlags {
  json?: boolean;
  quiet?: boolean;
  statsInterval?: number;
}

/** What the summary gains from the run itself: how long it took, and the time per phase. */
export interface RunTimes {
  durationMs: number;
  phases: { crawlMs: number; requisitesMs: number; writingMs: number };
  requestsPerSecond: number;
  bytesPerSecond: number;
}

/** What the runner hands a command's core: the service options, the cancel signal, the progress sink. */
export interface RunParts {
  /** With the run's clock, which the core takes among the same options. */
  service: FlagServiceOptions & RunClock;
  signal: AbortSignal;
  onEvent: ProgressReporter['onEvent'];
}

/** What a long-running command says about its own core; the runner does the rest. */
export interface LongCommand<R, S extends object> {
  /** The command, as its --json records name it. */
  name: 'export' | 'backup';
  /** Imports the core (lazily, so `--help` stays light) and returns how to call it; loaded beside the runner's own modules. */
  load(): Promise<(parts: RunParts) => Promise<R>>;
  complete(result: R): boolean;
  /** The summary's fields after `type`, `ok` and `exitCode`, in the order they are printed. */
  summary(result: R, times: RunTimes): S;
  /** The lines on stdout unless --quiet (or --json); `timeLine` is the time per phase. */
  describe(result: R, summary: S, timeLine: string): string;
  /** The lines on stderr, --quiet or not (not with --json). */
  warnings(result: R, summary: S): string;
  /** The message an interrupted run ends with, when the command has more to say than the core. */
  interrupted?: () => string;
  /** What the --metrics-file metrics are labelled with. */
  metricsLabel(): MetricsLabel;
}

/**
 * The action of a long-running command: service flags to options, progress shown while it runs,
 * SIGINT/SIGTERM to the core's signal, the progress stopped whatever happens, then one JSON
 * summary line (--json) or the command's own report, and exit 0 when complete, 3 when not.
 * With --healthcheck-url or --metrics-file the run is watched from its first step to its exit
 * code, failures before the export starts (no key, a held lock) included.
 */
export function runLongCommand<R, S extends object>(
  io: CliIO,
  flags: LongRunFlags,
  command: LongCommand<R, S>,
): Promise<void> {
  let monitor: RunMonitor | undefined;
  let summaryLine: Record<string, unknown> = {};
  const action = async (): Promise<number> => {
    const watch = monitorFlagsOf(flags, io.env);
    if (watch.healthcheckUrl !== undefined || watch.metricsFile !== undefined)
      monitor = await (await import('./run-monitor.js')).startMonitor(io, watch, command.metricsLabel);
    // Everything the run needs is loaded at once, not one await after another: the first
    // request waits for the slowest of these, not for their sum.
    const [run, { serviceOptionsOf }, { progressFor, summaryTimes }, { phaseLine }] = await Promise.all([
      command.load(),
      import('./service-options.js'),
      import('./progress.js'),
      import('./progress-line.js'),
    ]);
    const service = { ...(await serviceOptionsOf(flags, io.env, (line) => io.stderr.write(line))), ...io.clock };
    const progress = await progressFor(io, flags, command.name);
    const started = Date.now();
    let result: R;
    try {
      result = await withInterrupts(io, (signal) => run({ service, signal, onEvent: progress.onEvent }));
    } catch (error) {
      if (command.interrupted !== undefined && isRabbitError(error, 'INTERRUPTED'))
        throw new RabbitError('INTERRUPTED', command.interrupted());
      throw error;
    } finally {
      progress.stop();
    }
    const complete = command.complete(result);
    const code = complete ? EXIT.ok : EXIT.incomplete;
    const fields = command.summary(result, {
      durationMs: Date.now() - started,
      ...summaryTimes(progress.phaseTimes()),
    });
    summaryLine = jsonRecord(command.name, 'summary', { ok: complete, exitCode: code, ...fields });
    if (flags.json) {
      io.stdout.write(`${terminalJson(summaryLine)}\n`);
      return code;
    }
    if (!flags.quiet) io.stdout.write(command.describe(result, fields, phaseLine(progress.phaseTimes())));
    const warnings = command.warnings(result, fields);
    if (warnings !== '') io.stderr.write(warnings);
    return code;
  };
  return runAction(io, flags.json ? command.name : false, action, async (exitCode, failure) => {
    await monitor?.finish(failure ?? summaryLine, exitCode);
  });
}
