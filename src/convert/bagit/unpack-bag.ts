import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { isRabbitError, RabbitError } from '../../core/errors.js';
import { openZip } from '../../zip/zip-reader.js';

/**
 * A serialized bag (zip or tar) unpacked into `into`, for `--check`: only regular files under one
 * top-level folder, whose names climb nowhere. Returns that folder.
 */
export async function unpackBag(file: string, into: string): Promise<string> {
  let top: string | undefined;
  const place = (name: string): string => {
    const parts = name.split('/');
    if (parts.length < 2 || parts.some((part) => part === '' || part === '.' || part === '..'))
      throw new RabbitError(
        'PACKAGE_INVALID',
        `the serialized bag holds ${JSON.stringify(name)}, which is no file of a bag`,
      );
    if ((top ??= parts[0]) !== parts[0])
      throw new RabbitError('PACKAGE_INVALID', 'the serialized bag has more than one top-level folder');
    return join(into, ...parts);
  };
  const save = async (name: string, bytes: AsyncIterable<unknown> | NodeJS.ReadableStream): Promise<void> => {
    const path = place(name);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await pipeline(bytes as NodeJS.ReadableStream, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  };
  if (file.endsWith('.zip')) {
    try {
      const zip = await openZip(file);
      try {
        for (const name of zip.entries.keys()) if (!name.endsWith('/')) await save(name, await zip.openEntry(name));
      } finally {
        zip.close();
      }
    } catch (error) {
      // The bag is what convert wrote, not an archive: damage to its zip is the package's fault, as for a WACZ.
      if (!isRabbitError(error) || (error.code !== 'ARCHIVE_CORRUPT' && error.code !== 'NOT_A_ZIP')) throw error;
      const why = `the serialized bag cannot be read as it was written (${error.message})`;
      throw new RabbitError('PACKAGE_INVALID', why, { cause: error });
    }
  } else {
    const reader = extract();
    const done = pipeline(createReadStream(file), reader);
    for await (const entry of reader) {
      if (entry.header.type === 'directory') entry.resume();
      else if (entry.header.type !== 'file')
        throw new RabbitError('PACKAGE_INVALID', `the serialized bag holds a ${entry.header.type}, not only files`);
      else await save(entry.header.name, entry as unknown as NodeJS.ReadableStream);
    }
    await done;
  }
  if (top === undefined) throw new RabbitError('PACKAGE_INVALID', 'the serialized bag is empty');
  return join(into, top);
}
