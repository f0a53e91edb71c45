import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { escapeAttribute } from '../core/xml-escape.js';
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
  let target: string;
  try {
    target = launchFile(url);
  } catch {
    return Promise.resolve(false);
  }
  const [command, args] = browserCommand(target, platform);
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

/**
 * A page that sends the browser on to `url`, in a folder only this user may read, removed when this
 * process ends. The opener and the browser are handed its path, not the URL: a command line is
 * readable by every user of the machine (/proc/<pid>/cmdline), and the URL carries the token that
 * admits to the whole archive.
 */
function launchFile(url: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'rabbit-view-'));
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  const file = join(folder, 'open.html');
  const href = escapeAttribute(url);
  writeFileSync(
    file,
    `<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}">` +
      `<title>rabbit-export view</title><p><a href="${href}">Open the archive</a></p>\n`,
    { mode: 0o600 },
  );
  return pathToFileURL(file).href;
}
