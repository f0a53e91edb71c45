import { readFile } from 'node:fs/promises';
import { RabbitError } from '../core/errors.js';

export const KEY_ENV = 'RABBIT_API_KEY';

/**
 * API keys from `--api-key-file` (one per line, `#` comments and blank lines ignored) or from the
 * environment (comma-separated). There is deliberately no `--api-key` flag: arguments show up in
 * `ps` and shell history.
 */
export async function readKeys(keyFile: string | undefined, env: NodeJS.ProcessEnv): Promise<string[]> {
  let keys: string[];
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = await readFile(keyFile, 'utf8');
    } catch (error) {
      throw new RabbitError(
        'USAGE',
        `cannot read --api-key-file ${keyFile}: ${(error as { code?: string }).code ?? 'unreadable'}`,
      );
    }
    keys = text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    if (keys.length === 0) throw new RabbitError('NO_API_KEY', `--api-key-file ${keyFile} holds no key`);
  } else {
    keys = (env[KEY_ENV] ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key !== '');
    if (keys.length === 0) {
      throw new RabbitError('NO_API_KEY', `no API key: set ${KEY_ENV} or pass --api-key-file PATH`);
    }
  }
  for (const [index, key] of keys.entries()) {
    if (!/^[\x21-\x7e]+$/.test(key)) {
      throw new RabbitError('USAGE', `API key number ${index + 1} contains spaces or control characters`);
    }
  }
  return [...new Set(keys)];
}
