import { proxySettingsFromEnv } from '../client/proxy-env.js';
import type { ServiceOptions as SharedOptions } from '../client/service-options.js';
import { readKeys } from './keys.js';
import { DEFAULT_BASE_URL, refuseApiKeyFlag, type ServiceFlags } from './service-flags.js';

/** The part of the shared service options (client/service-options.ts) the flags give. */
export type FlagServiceOptions = Pick<
  SharedOptions,
  'baseUrl' | 'keys' | 'concurrency' | 'timeoutMs' | 'retry' | 'maxRps' | 'caps' | 'proxy' | 'allowInsecureHttp'
>;

/**
 * The options these flags stand for, for export, live check and restore alike; reads the key(s)
 * from the file or the environment, and the proxy from HTTPS_PROXY, HTTP_PROXY and NO_PROXY as
 * curl does. `warn` hears a key file others can read.
 */
export async function serviceOptionsOf(
  flags: ServiceFlags,
  env: NodeJS.ProcessEnv,
  warn?: (line: string) => void,
): Promise<FlagServiceOptions> {
  refuseApiKeyFlag(flags);
  return {
    baseUrl: flags.baseUrl ?? env['RABBIT_BASE_URL'] ?? DEFAULT_BASE_URL,
    keys: await readKeys(flags.apiKeyFile, env, warn),
    concurrency: flags.concurrency,
    timeoutMs: flags.timeout * 1000,
    retry: { attempts: flags.retries },
    ...(flags.maxRps ? { maxRps: flags.maxRps } : {}),
    ...(flags.maxSize ? { caps: flags.maxSize } : {}),
    proxy: proxySettingsFromEnv(env),
    ...(flags.allowInsecureHttp ? { allowInsecureHttp: true } : {}),
  };
}
