import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { RabbitError } from '../../core/errors.js';
import type { PackageCheck } from '../formats/archive-format.js';
import { walkFolder } from './walk-folder.js';
import { BAG_INFO, BAGIT_TXT, MANIFEST, TAG_MANIFEST } from './write-bag.js';

/**
 * Validates a bag folder as RFC 8493 3 says a bag is valid: the declaration, every file of every
 * manifest present with its checksum, and Payload-Oxum agreeing with the payload. A serialized bag
 * is checked by unpacking it elsewhere first (`sha256sum -c`, or a BagIt tool).
 */
export async function checkBag(path: string, onChecked?: (entries: number) => void): Promise<PackageCheck> {
  if (!(await stat(path)).isDirectory()) return checkSerialized(path, onChecked);
  const declaration = await readFile(join(path, BAGIT_TXT), 'utf8').catch(() => fail(`it has no ${BAGIT_TXT}`));
  if (!/^BagIt-Version: 1\.0\r?\nTag-File-Character-Encoding: UTF-8\r?\n$/.test(declaration))
    fail(`${BAGIT_TXT} is not the BagIt 1.0 declaration`);
  const onDisk = await payloadFiles(path);
  const tags = await checkManifest(path, TAG_MANIFEST);
  const payload = await checkManifest(path, MANIFEST, onChecked);
  // Every listed file is there (checked above); as many on disk as listed leaves none unlisted (RFC 8493 3).
  if (onDisk !== payload.files) fail(await unlistedIn(path, onDisk < payload.files));
  const info = await readFile(join(path, BAG_INFO), 'utf8').catch(() => fail(`it has no ${BAG_INFO}`));
  const oxum = /^Payload-Oxum: (\d+)\.(\d+)$/m.exec(info);
  if (oxum === null || Number(oxum[1]) !== payload.bytes || Number(oxum[2]) !== payload.files)
    fail(`Payload-Oxum in ${BAG_INFO} does not match the payload`);
  return { files: tags.files + 1, entries: payload.files };
}

/** How many files `data/` holds, refusing anything but files and folders (a link reads what is outside the bag). */
async function payloadFiles(bag: string): Promise<number> {
  let files = 0;
  if ((await stat(join(bag, 'data')).catch(() => undefined))?.isDirectory() !== true) fail('it has no data/ folder');
  for await (const { path, entry } of walkFolder(join(bag, 'data'))) {
    if (entry.isFile()) files++;
    else if (!entry.isDirectory()) fail(`data/${path} is not a file nor a folder`);
  }
  return files;
}

/**
 * Why the payload and its manifest disagree in number: a manifest line repeated, or the first
 * file no line lists. Only a bag that fails pays for the set of its manifest's names.
 */
async function unlistedIn(bag: string, repeated: boolean): Promise<string> {
  if (repeated) return `${MANIFEST} lists a file more than once`;
  const listed = new Set<string>();
  for await (const line of manifestLines(bag, MANIFEST)) listed.add(line.slice(66));
  for await (const { path, entry } of walkFolder(join(bag, 'data'))) {
    if (entry.isFile() && !listed.has(`data/${path}`)) return `data/${path} is in the payload but not in ${MANIFEST}`;
  }
  return `${MANIFEST} and the payload disagree`;
}

/** The lines of a manifest, refusing a bag that has none of that name. */
async function* manifestLines(bag: string, name: string): AsyncGenerator<string> {
  const handle = await open(join(bag, name)).catch(() => fail(`it has no ${name}`));
  try {
    yield* createInterface({ input: handle.createReadStream({ autoClose: false }), crlfDelay: Infinity });
  } finally {
    await handle.close();
  }
}

async function checkManifest(
  bag: string,
  name: string,
  onChecked?: (files: number) => void,
): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const line of manifestLines(bag, name)) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (match === null) fail(`${name} has a line that is not "checksum  path"`);
    const [, sum, encoded] = match as unknown as [string, string, string];
    // RFC 8493 2.1.3: a path's CR, LF and % are percent-encoded in a manifest line.
    const file = encoded.replace(/%(0A|0D|25)/gi, (escape) => decodeURIComponent(escape));
    if (file.split('/').some((part) => part === '..' || part === '') || file.startsWith('/'))
      fail(`${name} lists a path outside the bag`);
    if (name === MANIFEST && !file.startsWith('data/')) fail(`${name} lists ${file}, which is not in data/`);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of createReadStream(join(bag, file))) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
    } catch {
      fail(`${file}, listed in ${name}, is missing`);
    }
    if (hash.digest('hex') !== sum) fail(`${file} does not match its checksum in ${name}`);
    files++;
    bytes += size;
    onChecked?.(files);
  }
  return { files, bytes };
}

/** A zip or tar bag, unpacked into a folder beside it and checked there. */
async function checkSerialized(
  path: string,
  onChecked: ((entries: number) => void) | undefined,
): Promise<PackageCheck> {
  const { unpackBag } = await import('./unpack-bag.js');
  const work = await mkdtemp(join(dirname(path), '.bag-check-'));
  try {
    return await checkBag(await unpackBag(path, work), onChecked);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function fail(why: string): never {
  throw new RabbitError('PACKAGE_INVALID', `the bag is not valid: ${why}`);
}
