import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { RabbitError } from '../../core/errors.js';
import type { PackageCheck } from '../formats/archive-format.js';
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
  const tags = await checkManifest(path, TAG_MANIFEST);
  const payload = await checkManifest(path, MANIFEST, onChecked);
  const info = await readFile(join(path, BAG_INFO), 'utf8');
  const oxum = /^Payload-Oxum: (\d+)\.(\d+)$/m.exec(info);
  if (oxum === null || Number(oxum[1]) !== payload.bytes || Number(oxum[2]) !== payload.files)
    fail(`Payload-Oxum in ${BAG_INFO} does not match the payload`);
  return { files: tags.files + 1, entries: payload.files };
}

async function checkManifest(
  bag: string,
  name: string,
  onChecked?: (files: number) => void,
): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const line of createInterface({ input: createReadStream(join(bag, name)), crlfDelay: Infinity })) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (match === null) fail(`${name} has a line that is not "checksum  path"`);
    const [, sum, file] = match as unknown as [string, string, string];
    if (file.split('/').some((part) => part === '..' || part === '') || file.startsWith('/'))
      fail(`${name} lists a path outside the bag`);
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
