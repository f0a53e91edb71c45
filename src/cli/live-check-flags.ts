import { readArchiveManifest } from '../archive/open-archive.js';
import type { LiveCheckOptions } from '../live-check/check-live.js';
import { parseSampleSize, parseSeed } from '../live-check/sample-plan.js';
import { runLimitsOf, type RunLimitFlags } from './run-limit-flags.js';
import { serviceOptionsOf } from './service-options.js';
import type { ServiceFlags } from './service-flags.js';

export interface LiveCheckFlags extends ServiceFlags, RunLimitFlags {
  sample?: string;
  seed?: string;
  maxRequests?: number;
}

/**
 * The check's options from verify's flags: the service as export reaches it (keys, proxy, limits),
 * at the archive's own base URL unless --base-url or RABBIT_BASE_URL names another.
 */
export async function liveCheckOptionsOf(
  archive: string,
  flags: LiveCheckFlags,
  env: NodeJS.ProcessEnv,
): Promise<LiveCheckOptions> {
  const sample = flags.sample === undefined ? undefined : parseSampleSize(flags.sample);
  const seed = flags.seed === undefined ? undefined : parseSeed(flags.seed);
  const service = await serviceOptionsOf(flags, env);
  const baseUrl = flags.baseUrl ?? env['RABBIT_BASE_URL'] ?? (await readArchiveManifest(archive)).source.baseUrl;
  return {
    ...service,
    ...runLimitsOf(flags),
    baseUrl,
    archive,
    ...(sample ? { sample } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(flags.maxRequests !== undefined ? { maxRequests: flags.maxRequests } : {}),
  };
}
