import { spawn } from 'node:child_process';

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
export type Spawner = (command: string, args: string[]) => Spawned;

const detachedSpawn: Spawner = (command, args) => spawn(command, args, { stdio: 'ignore', detached: true });

/**
 * Asks the desktop to open `url`; resolves false (never throws) when there is no opener, so the
 * caller can say "open it yourself" instead of failing a server that works.
 */
export function openInBrowser(
  url: string,
  { platform = process.platform, run = detachedSpawn }: { platform?: NodeJS.Platform; run?: Spawner } = {},
): Promise<boolean> {
  const [command, args] = browserCommand(url, platform);
  return new Promise((resolve) => {
    let child: ReturnType<Spawner>;
    try {
      child = run(command, args);
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
