import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../storage/atomic-file.js';

/**
 * The last run as Prometheus metrics, in the text exposition format that node_exporter's textfile
 * collector reads (`--collector.textfile.directory`): one file per backup folder or export, replaced
 * atomically so the collector never reads half of it. Everything is a gauge about the last run,
 * except the time of the last success, which is carried from the previous file so that an alert
 * such as `time() - rabbit_export_last_success_timestamp_seconds > 36 * 3600` fires when nights
 * fail or stop running. It is 0 until a run has succeeded.
 */

/** What the metrics are about: `dir` (a backup folder) or `out` (an export's archive). */
export interface MetricsLabel {
  name: 'dir' | 'out';
  value: string;
}

export interface RunRecord {
  startedMs: number;
  endedMs: number;
  exitCode: number;
  /** The run's JSON summary line, as printed; a failed run's has no counts. */
  summary: Readonly<Record<string, unknown>>;
}

interface Metric {
  name: string;
  help: string;
  value: number | undefined;
}

const PREFIX = 'rabbit_export_';
const LAST_SUCCESS = `${PREFIX}last_success_timestamp_seconds`;

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The file's text. Counts a failed run does not have are left out rather than reported as 0. */
export function metricsText(run: RunRecord, label: MetricsLabel, lastSuccessMs: number | null): string {
  const count = (field: string): number | undefined => {
    const value = run.summary[field];
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  };
  const complete = run.summary['complete'];
  const metrics: Metric[] = [
    { name: 'last_run_start_timestamp_seconds', help: 'When the last run started.', value: run.startedMs / 1000 },
    { name: 'last_run_end_timestamp_seconds', help: 'When the last run ended.', value: run.endedMs / 1000 },
    {
      name: 'last_success_timestamp_seconds',
      help: 'When a run last ended complete (exit code 0); 0 if none has.',
      value: lastSuccessMs === null ? 0 : lastSuccessMs / 1000,
    },
    {
      name: 'last_run_duration_seconds',
      help: 'How long the last run took.',
      value: (run.endedMs - run.startedMs) / 1000,
    },
    {
      name: 'last_run_exit_code',
      help: 'Exit code of the last run: 0 complete, 3 incomplete, 1 failed.',
      value: run.exitCode,
    },
    {
      name: 'last_run_complete',
      help: 'Whether the last run archived everything (1) or not (0).',
      value: complete === true && run.exitCode === 0 ? 1 : 0,
    },
    { name: 'last_run_requests', help: 'HTTP requests the last run made.', value: count('requests') },
    {
      name: 'last_run_wire_bytes',
      help: 'Bytes the last run received from the service.',
      value: count('wireBytes') ?? count('bytes'),
    },
    { name: 'last_run_archive_bytes', help: 'Size of the archive the last run wrote.', value: count('bytes') },
    { name: 'last_run_resources', help: 'Files in the archive the last run wrote.', value: count('files') },
    { name: 'last_run_errors', help: 'Resources the last run could not archive.', value: count('errors') },
    {
      name: 'drift_resources',
      help: 'Differences between the last archive and the service found right after it was written (backup --check-sample).',
      value: driftOf(run.summary),
    },
  ];
  const labels = `{${label.name}="${escapeLabelValue(label.value)}"}`;
  let text = '';
  for (const metric of metrics) {
    if (metric.value === undefined) continue;
    text += `# HELP ${PREFIX}${metric.name} ${metric.help}\n`;
    text += `# TYPE ${PREFIX}${metric.name} gauge\n`;
    text += `${PREFIX}${metric.name}${labels} ${formatValue(metric.value)}\n`;
  }
  return text;
}

/** The `check` of a backup's summary, when it ran: how many differences it found. */
function driftOf(summary: Readonly<Record<string, unknown>>): number | undefined {
  const check = summary['check'];
  const value =
    typeof check === 'object' && check !== null ? (check as Record<string, unknown>)['differences'] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}

/** The last success recorded in an earlier file for the same label, in ms; null when there is none. */
export async function previousSuccess(path: string, label: MetricsLabel): Promise<number | null> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const prefix = `${LAST_SUCCESS}{${label.name}="${escapeLabelValue(label.value)}"} `;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const seconds = Number(line.slice(prefix.length));
    return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : null;
  }
  return null;
}

/** Writes the metrics of `run`, keeping the last success across runs. */
export async function writeMetricsFile(path: string, run: RunRecord, label: MetricsLabel): Promise<void> {
  const lastSuccess = run.exitCode === 0 ? run.endedMs : await previousSuccess(path, label);
  await writeFileAtomic(path, metricsText(run, label, lastSuccess));
}
