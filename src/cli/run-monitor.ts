import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import { proxyFor, proxySettingsFromEnv } from '../client/proxy-env.js';
import { ping, type PingKind, type PingOptions } from '../monitor/healthcheck.js';
import { writeMetricsFile, type MetricsLabel } from '../monitor/metrics.js';
import { printable } from './format.js';
import type { MonitorFlags } from './monitor-flags.js';
import type { CliIO } from './run.js';

/** What watches one run from outside: the healthcheck pings and the metrics file. */
export interface RunMonitor {
  /** Reports the run's end: the summary line as printed and the exit code. Never throws. */
  finish(summary: Readonly<Record<string, unknown>>, exitCode: number): Promise<void>;
}

/**
 * Pings `start` (when asked to) and returns the monitor that reports the end. A ping or a metrics
 * file that cannot be written is a warning on stderr: watching a backup must never be the reason
 * it failed. The check's URL is the user's secret as much as a key is, so messages name its host only.
 */
export async function startMonitor(
  io: CliIO,
  flags: MonitorFlags,
  label: () => MetricsLabel,
  options: PingOptions = {},
): Promise<RunMonitor> {
  const startedMs = Date.now();
  const url = flags.healthcheckUrl;
  let dispatcher: Dispatcher | undefined;
  // The run's clock, when it has one of its own, paces the retries too.
  const clockSleep = io.clock?.sleep;
  const pingClock = clockSleep ? { sleep: (ms: number) => clockSleep(ms, new AbortController().signal) } : {};
  const send = async (kind: PingKind, body: string): Promise<void> => {
    if (url === undefined) return;
    dispatcher ??= options.dispatcher ?? dispatcherFor(url, io.env);
    const outcome = await ping(url, kind, body, { ...pingClock, ...options, dispatcher });
    if (!outcome.ok) {
      const what = kind === 'start' ? 'start' : kind === 'success' ? 'success' : `exit code ${kind.exitCode}`;
      io.stderr.write(
        `rabbit-export: warning: the healthcheck ping (${what}) to ${new URL(url).host} failed after ${outcome.attempts} attempts: ${printable(outcome.reason)}\n`,
      );
    }
  };
  await send('start', JSON.stringify({ type: 'start', startedAt: new Date(startedMs).toISOString() }));
  return {
    async finish(summary, exitCode) {
      const endedMs = Date.now();
      if (flags.metricsFile !== undefined) {
        try {
          await writeMetricsFile(flags.metricsFile, { startedMs, endedMs, exitCode, summary }, label());
        } catch (error) {
          io.stderr.write(
            `rabbit-export: warning: cannot write the metrics file ${printable(flags.metricsFile)}: ${printable((error as Error).message)}\n`,
          );
        }
      }
      try {
        await send(exitCode === 0 ? 'success' : { exitCode }, JSON.stringify(summary));
      } finally {
        if (options.dispatcher === undefined) await dispatcher?.close().catch(() => undefined);
      }
    },
  };
}

/** Pings go through the same proxy as the export would (HTTPS_PROXY and friends), each monitor on its own pool. */
function dispatcherFor(url: string, env: NodeJS.ProcessEnv): Dispatcher {
  const proxy = proxyFor(new URL(url), proxySettingsFromEnv(env));
  return proxy === undefined ? new Agent() : new ProxyAgent(proxy.toString());
}
