/**
 * A restore's own defaults in one block: restore-prototype.ts applies them, and `restore --help`
 * shows them (this module is all the help loads of the restore), so the help says what applies.
 */
export const RESTORE_DEFAULTS = { concurrency: 4, timeoutMs: 60_000 } as const;
