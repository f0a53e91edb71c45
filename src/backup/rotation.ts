export const BACKUP_DEFAULTS = {
  /** Two weeks of nightly runs: the folder never grows without bound unless asked to. */
  keep: 14,
  /** The largest N a --keep-* flag takes. */
  maxKeep: 100_000,
} as const;
