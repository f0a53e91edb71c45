/**
 * The API keys this process knows of, to hide wherever they would be written. Kept apart from
 * keys.ts (which reads them) and free of imports: the error printer loads it on every command
 * line, and `--help` should load no more than it needs.
 */
export const KEY_ENV = 'RABBIT_API_KEY';

/** The keys this process has read from an --api-key-file, whichever command read them. */
const fileKeys = new Set<string>();

export function rememberFileKeys(keys: readonly string[]): void {
  for (const key of keys) fileKeys.add(key);
}

/** The keys of RABBIT_API_KEY, trimmed, each with its place in the list (from 1, empty entries counted). */
export function envKeyEntries(env: NodeJS.ProcessEnv): Array<{ key: string; entry: number }> {
  return (env[KEY_ENV] ?? '')
    .split(',')
    .map((key, index) => ({ key: key.trim(), entry: index + 1 }))
    .filter((source) => source.key !== '');
}

/**
 * Every key the process knows of: the environment's (known before any command runs, so a usage
 * error that quotes one can hide it too) and those read from a key file. A key the user typed that
 * is neither cannot be told from any other word.
 */
export function knownKeys(env: NodeJS.ProcessEnv): string[] {
  return [...new Set([...envKeyEntries(env).map((source) => source.key), ...fileKeys])];
}
