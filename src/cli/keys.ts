import { readFile } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';

export const KEY_ENV = 'RABBIT_API_KEY';

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
export async function readKeys(keyFile: string | undefined, env: NodeJS.ProcessEnv): Promise<string[]> {
  return (await readKeySources(keyFile, env)).map((source) => source.key);
}

/** The distinct keys in the order the run uses them, each with the first place it was written. */
export async function readKeySources(keyFile: string | undefined, env: NodeJS.ProcessEnv): Promise<KeySource[]> {
  let sources: KeySource[];
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = await readFile(keyFile, 'utf8');
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
    if (sources.length === 0) throw new RabbitError('NO_API_KEY', `--api-key-file ${keyFile} holds no key`);
  } else {
    sources = (env[KEY_ENV] ?? '')
      .split(',')
      .map((key, index) => ({ key: key.trim(), where: `entry ${index + 1} of ${KEY_ENV}` }))
      .filter((source) => source.key !== '');
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
