import { createReadStream, createWriteStream } from 'node:fs';
import { opendir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pack } from 'tar-stream';
import { RabbitError } from '../../core/errors.js';
import { tempPathFor } from '../../core/output-file.js';
import { ZipWriter } from '../../zip/zip-writer.js';
import { writeError } from '../hashed-file.js';
import { walkFolder } from './walk-folder.js';

/**
 * The bag as one file (RFC 8493 4.3): its folder as the one top-level directory, named as the file
 * is without its extension. A zip goes through the archive's own zip writer; a tar is POSIX ustar
 * (with pax headers for long names) from tar-stream. Either is written beside its name and renamed.
 */
export async function serializeBag(
  bag: string,
  top: string,
  target: string,
  as: string,
  signal: AbortSignal | undefined,
  onFile?: (files: number) => void,
): Promise<void> {
  const files = counted(bagFiles(bag), onFile);
  if (as === 'zip') return zipBag(files, bag, top, target, signal);
  if (as === 'tar') return tarBag(files, bag, top, target);
  throw new RabbitError('USAGE', `--serialize takes zip or tar, not ${JSON.stringify(as)}`);
}

/** Every file of the bag, tag files first (bagit.txt leads), then the payload as the folder lists it. */
async function* bagFiles(bag: string): AsyncGenerator<string> {
  const tags: string[] = [];
  for await (const entry of await opendir(bag)) if (entry.isFile()) tags.push(entry.name);
  yield* tags.sort((a, b) => (a === 'bagit.txt' ? -1 : b === 'bagit.txt' ? 1 : a < b ? -1 : 1));
  for await (const { path, entry } of walkFolder(join(bag, 'data'))) if (entry.isFile()) yield `data/${path}`;
}

/** The names as they go by, each counted once the one before it is written. */
async function* counted(names: AsyncIterable<string>, onFile?: (files: number) => void): AsyncGenerator<string> {
  let files = 0;
  for await (const name of names) {
    yield name;
    onFile?.(++files);
  }
}

async function zipBag(
  files: AsyncIterable<string>,
  bag: string,
  top: string,
  target: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const zip = await ZipWriter.create(target, signal ? { signal } : {});
  try {
    for await (const name of files) {
      const file = join(bag, name);
      await zip.addFile(
        { name: `${top}/${name}`, store: /\.(png|gz|zip)$/i.test(name) },
        { file, size: (await stat(file)).size },
      );
    }
    await zip.finish();
  } catch (error) {
    await zip.abort();
    throw error;
  }
}

async function tarBag(files: AsyncIterable<string>, bag: string, top: string, target: string): Promise<void> {
  const partial = tempPathFor(target);
  const tar = pack();
  const written = pipeline(tar, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
  try {
    for await (const name of files) {
      const file = join(bag, name);
      const { size, mtime } = await stat(file);
      const sink = tar.entry({ name: `${top}/${name}`, size, mode: 0o644, mtime });
      await pipeline(createReadStream(file), sink);
    }
    tar.finalize();
    await written;
    await rename(partial, target);
  } catch (error) {
    tar.destroy();
    await written.catch(() => undefined);
    await rm(partial, { force: true });
    throw writeError(target, error);
  }
}
