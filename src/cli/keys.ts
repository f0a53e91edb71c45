import { open } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';
import { shellWords } from '../core/shell-quote.js';
import { envKeyEntries, KEY_ENV, rememberFileKeys } from './known-keys.js';

export { KEY_ENV };

/** One key, and where the user wrote it, so a refused key can be named without showing it. */
export interface KeySource {
  key: string;
  /** "line 2 of keys.txt" or "entry 2 of RABBIT_API_KEY". */
  where: string;
}

/**
 * API keys from `--api-key-file` (one per line, `#` comments and blank lines ignored) or from the
 * environment (comma-separated). There is deliberately no `--api-key` flag: arguments show up in
 * `ps` and shell history.
 */
export async function readKeys(
  keyFile: string | undefined,
  env: NodeJS.ProcessEnv,
  warn?: (line: string) => void,
): Promise<string[]> {
  return (await readKeySources(keyFile, env, warn)).map((source) => source.key);
}

/**
 * The warning ssh gives for an unprotected private key, for a key file that other users may read
 * (or write): the run goes on, since the key may already be exposed and stopping saves nothing,
 * but the user learns of it and of the one command that ends it.
 */
export function keyFileWarning(keyFile: string, mode: number): string | undefined {
  if ((mode & 0o077) === 0) return undefined;
  const octal = (mode & 0o777).toString(8).padStart(4, '0');
  return `rabbit-export: warning: the key file ${keyFile} can be read by other users of this machine (mode ${octal}); make it yours alone: ${shellWords('chmod', '600', keyFile)}\n`;
}

/** The distinct keys in the order the run uses them, each with the first place it was written. */
export async function readKeySources(
  keyFile: string | undefined,
  env: NodeJS.ProcessEnv,
  warn?: (line: string) => void,
): Promise<KeySource[]> {
  let sources: KeySource[];
  if (keyFile !== undefined) {
    let text: string;
    try {
      const handle = await open(keyFile, 'r');
      try {
        // The mode of the file read, not of whatever the path names a moment later.
        const warning = keyFileWarning(keyFile, (await handle.stat()).mode);
        if (warning !== undefined) warn?.(warning);
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      const why =
        code === 'ENOENT'
          ? 'there is no such file'
          : code === 'EISDIR'
            ? 'it is a folder'
            : code === 'EACCES' || code === 'EPERM'
              ? 'permission denied'
              : 'it cannot be read';
      throw new RabbitError('KEY_FILE', `cannot read --api-key-file ${keyFile}: ${why}`, {
        cause: error,
        data: { path: keyFile },
      });
    }
    sources = text.split(/\r?\n/).flatMap((line, index) => {
      const key = line.trim();
      return key === '' || key.startsWith('#') ? [] : [{ key, where: `line ${index + 1} of ${keyFile}` }];
    });
    rememberFileKeys(sources.map((source) => source.key));
    if (sources.length === 0) throw new RabbitError('NO_API_KEY', `--api-key-file ${keyFile} holds no key`);
  } else {
    sources = envKeySources(env);
    if (sources.length === 0) {
      throw new RabbitError('NO_API_KEY', `no API key: set ${KEY_ENV} or pass --api-key-file PATH`);
    }
  }
  for (const source of sources) {
    if (!/^[\x21-\x7e]+$/.test(source.key)) {
      throw new RabbitError('USAGE', `the API key on ${source.where} contains spaces or control characters`);
    }
  }
  const seen = new Set<string>();
  return sources.filter((source) => !seen.has(source.key) && seen.add(source.key));
}

function envKeySources(env: NodeJS.ProcessEnv): KeySource[] {
  return envKeyEntries(env).map(({ key, entry }) => ({ key, where: `entry ${entry} of ${KEY_ENV}` }));
}
