import { checkAgainstLive, type LiveCheckOptions } from '../live-check/check-live.js';
import { liveVerdict, unexplained, type LiveCheckReport, type LiveVerdict } from '../live-check/live-report.js';
import { formatSampleSize, type SampleSize } from '../live-check/sample-plan.js';
import type { StopReason } from '../live-check/live-client.js';

/**
 * `backup --check-sample`: the night's archive compared with the service right after it was
 * written (verify --against-live on a sample). People editing meanwhile is normal: that drift is
 * reported, not failed. A resource that differs while its prototype's revision has not moved is
 * another matter: no edit explains it, so the archive does not hold what the night fetched, and
 * the night fails (and does not count as a good archive for retention).
 */
export interface NightCheck {
  sample: string;
  /** The sample's seed: `verify ARCHIVE --against-live --sample S --seed N` repeats the check. */
  seed: number;
  verdict: LiveVerdict;
  /** Lists, metadata and sampled resources compared, and their share of the archive (0..1). */
  checked: number;
  share: number;
  /** Every difference found; drift metrics report this number. */
  differences: number;
  changed: number;
  new: number;
  gone: number;
  /** Differences at an unchanged revision: what makes the night a failure. */
  unexplained: number;
  failed: boolean;
  /** Resources the service did not let be compared. */
  notChecked: number;
  stoppedBy?: StopReason;
}

export type NightCheckOptions = Omit<LiveCheckOptions, 'archive' | 'sample' | 'seed' | 'maxRequests' | 'maxDurationMs'>;

export async function checkNight(archive: string, sample: SampleSize, options: NightCheckOptions): Promise<NightCheck> {
  return nightCheckOf(await checkAgainstLive({ ...options, archive, sample }));
}

export function nightCheckOf(report: LiveCheckReport): NightCheck {
  const count = (status: 'changed' | 'new' | 'gone'): number =>
    report.differences.filter((difference) => difference.status === status).length;
  const odd = unexplained(report).length;
  return {
    sample: formatSampleSize(report.sample),
    seed: report.seed,
    verdict: liveVerdict(report),
    checked: report.sampledChecked + report.lists.checked,
    share: Math.round(report.share * 10_000) / 10_000,
    differences: report.differences.length,
    changed: count('changed'),
    new: count('new'),
    gone: count('gone'),
    unexplained: odd,
    failed: odd > 0,
    notChecked: report.failureCount,
    ...(report.stoppedBy ? { stoppedBy: report.stoppedBy } : {}),
  };
}

/** The night's own way to the service (keys, proxy, limits, clocks), for its check. */
export function nightCheckOptions(night: NightCheckOptions & Record<string, unknown>): NightCheckOptions {
  const picked: Record<string, unknown> = {};
  for (const name of CHECK_OPTIONS) if (night[name] !== undefined) picked[name] = night[name];
  return picked as unknown as NightCheckOptions;
}

const CHECK_OPTIONS = [
  'baseUrl',
  'keys',
  'concurrency',
  'timeoutMs',
  'retry',
  'maxRps',
  'caps',
  'proxy',
  'allowInsecureHttp',
  'dispatcher',
  'outagePatienceMs',
  'outage',
  'stall',
  'signal',
  'random',
  'sleep',
] as const satisfies readonly (keyof NightCheckOptions)[];
