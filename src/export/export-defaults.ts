import type { Format } from '../crawl/crawl-account.js';

/**
 * An export's defaults in one block. Kept apart from the option checks in export-options.ts so
 * the CLI's flag definitions (all that `export --help` loads) show them without loading the URL
 * and proxy code those checks need.
 */
export const EXPORT_DEFAULTS = {
  concurrency: 8,
  timeoutMs: 60_000,
  formats: new Set<Format>(['json', 'html', 'png']) as ReadonlySet<Format>,
} as const;
