import { spawn } from 'node:child_process';
import { KEY_ENV } from './keys.js';
import { HEALTHCHECK_URL_ENV } from './monitor-flags.js';

/** The program that opens a URL in the user's default browser, per platform. */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""', url]];
  return ['xdg-open', [url]];
}

/** What openInBrowser needs of a child process: a test passes its own. */
export interface Spawned {
  once(event: 'spawn', listener: () => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  unref(): void;
}
export type Spawner = (command: string, args: string[], env: NodeJS.ProcessEnv) => Spawned;

const detachedSpawn: Spawner = (command, args, env) => spawn(command, args, { stdio: 'ignore', detached: true, env });

const PROXY_VARIABLES = /^(?:https?|all|ftp|socks)_proxy$/i;

/**
 * The environment the browser starts with: ours without the tool's secrets. A browser outlives the
 * command, starts helpers and extensions, and writes crash reports that include its environment;
 * none of them needs the API key, the check's URL or a proxy password. A proxy variable without
 * credentials stays, so the browser still finds the way out.
 */
export function browserEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name === KEY_ENV || name === HEALTHCHECK_URL_ENV || name.startsWith('RABBIT_')) continue;
    if (PROXY_VARIABLES.test(name) && value.includes('@')) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * Asks the desktop to open `url`; resolves false (never throws) when there is no opener, so the
 * caller can say "open it yourself" instead of failing a server that works. The opener gets
 * `browserEnv(env)`, never the secrets this process holds.
 */
export function openInBrowser(
  url: string,
  {
    platform = process.platform,
    run = detachedSpawn,
    env = process.env,
  }: { platform?: NodeJS.Platform; run?: Spawner; env?: NodeJS.ProcessEnv } = {},
): Promise<boolean> {
  const [command, args] = browserCommand(url, platform);
  return new Promise((resolve) => {
    let child: ReturnType<Spawner>;
    try {
      child = run(command, args, browserEnv(env));
    } catch {
      resolve(false);
      return;
    }
    // A missing program is reported as an error after spawn returns; one that started has done its part.
    child.once('error', () => resolve(false));
    child.once('spawn', () => resolve(true));
    child.unref();
  });
}
