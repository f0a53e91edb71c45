import type { Format } from '../crawl/crawl-account.js';

/**
 * An export's own defaults in one block; export-settings.ts is the one place they are applied (the
 * size caps are the crawl's, the retry, stall and outage policies the client's). Kept apart from
 * the settings so the CLI's flag definitions (all that `export --help` loads) show them without
 * loading the URL and proxy code the settings' checks need.
 */
export const EXPORT_DEFAULTS = {
  concurrency: 8,
  timeoutMs: 60_000,
  formats: new Set<Format>(['json', 'html', 'png']) as ReadonlySet<Format>,
  /**
   * How long the first request may take, retries included, before the run ends as NO_ANSWER: a
   * wrong --base-url often points at a host that accepts connections and never answers, and with
   * the patient per-request timeout and retries the user would wait minutes for a hint.
   */
  firstContactMs: 30_000,
} as const;
