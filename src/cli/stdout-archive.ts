import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';

/**
 * The edge of `export --out -`: where the archive is built (the user's cache, as XDG says) and how
 * the finished file goes to stdout.
 */

/** `$XDG_CACHE_HOME/rabbit-export/stdout`, else `~/.cache/rabbit-export/stdout`. */
export function defaultWorkDir(env: NodeJS.ProcessEnv): string {
  const cache = env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache');
  return join(cache, 'rabbit-export', 'stdout');
}

/**
 * Copies the file, from the handle it was verified through (never reopened by name), to `stream` and returns what was sent. A reader that goes away (`| head`, a
 * failed upload) is a failure here, never the success that `ls | head` is: the process-wide EPIPE
 * handler is set aside while the archive is being written, so the error reaches this function and
 * becomes exit code 1, and the summary says nothing was sent whole.
 */
export async function sendArchive(
  handle: FileHandle,
  stream: NodeJS.WriteStream,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const saved = stream.listeners('error') as ((error: Error) => void)[];
  stream.removeAllListeners('error');
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onError = (error: Error): void => {
    failure ??= error;
    wake?.();
  };
  stream.on('error', onError);
  const wait = (register: (done: () => void) => void): Promise<void> =>
    new Promise((resolve) => {
      wake = resolve;
      register(resolve);
    });
  try {
    for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
      if (failure) break;
      const data = chunk as Buffer;
      hash.update(data);
      bytes += data.length;
      if (!stream.write(data)) await wait((done) => stream.once('drain', done));
    }
    // The last write's callback: its bytes are with the reader (or its pipe), or the error is known.
    if (!failure)
      await wait((done) =>
        stream.write('', (error) => {
          if (error) onError(error);
          done();
        }),
      );
  } finally {
    stream.off('error', onError);
    for (const listener of saved) stream.on('error', listener);
  }
  if (failure) {
    const broken = (failure as NodeJS.ErrnoException).code === 'EPIPE';
    throw new RabbitError(
      'OUTPUT_UNWRITABLE',
      broken
        ? 'stdout was closed before the archive was sent whole (broken pipe); nothing complete was sent'
        : `cannot write the archive to stdout: ${failure.message}; it was not sent whole`,
      { cause: failure },
    );
  }
  return { bytes, sha256: hash.digest('hex') };
}
