import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, realpath, rename, rm, type FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { RabbitError } from '../../core/errors.js';
import { writeFully } from '../../core/positional-io.js';
import { createPrivateFile } from '../../core/private-files.js';
import { TOOL_NAME, TOOL_VERSION } from '../../core/version.js';
import { MANIFEST_PATH, type FileEntry } from '../../manifest/types.js';
import type { ManifestHead } from '../../manifest/manifest-stream.js';
import type { PackageJob, PackageReport } from '../formats/archive-format.js';
import { packagedBody } from '../packaged-body.js';
import { HashedFile, writeError } from '../hashed-file.js';
import { numberedName, payloadNameOf } from './payload-names.js';
import { serializeBag } from './serialize-bag.js';

export const SERIALIZATIONS: readonly string[] = ['zip', 'tar'];
export const BAGIT_TXT = 'bagit.txt';
export const BAG_INFO = 'bag-info.txt';
export const MANIFEST = 'manifest-sha256.txt';
export const TAG_MANIFEST = 'tagmanifest-sha256.txt';
/** RFC 8493 2.1.1: the version and encoding, the first two lines of every bag. */
const DECLARATION = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
/** The manifest is the archive's own index: larger than any body, and still bounded. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024 * 1024;
/** How far a taken name is numbered before giving up on it. */
const MAX_NUMBER = 1000;

/**
 * An RFC 8493 bag of every entry of the archive, `manifest.json` included, each checked against
 * the manifest as it is read: `data/` as the archive names things (made safe where a name is not
 * plain, payload-names.ts), the sha256 manifest written as the files are, bag-info.txt, and the
 * tag manifest. The bag is built in a work folder and moved into place whole, or serialized into
 * one zip or tar, so nothing at `--out` looks like a bag before it is one.
 */
export async function writeBag(job: PackageJob): Promise<PackageReport> {
  const file = job.serialize === undefined ? job.stem : `${job.stem}.${job.serialize}`;
  await checkTarget(job, join(job.out, file));
  const work = await mkdtemp(join(job.out, `.${job.stem}.bag-work-`));
  try {
    const bag = join(work, job.stem);
    await mkdir(join(bag, 'data'), { recursive: true, mode: 0o700 });
    const head = await job.archive.manifest();
    const payload = await writeBagPayload(job, bag);
    job.onProgress?.({ step: 'finish', done: 0, total: null });
    await writeTagFiles(job, bag, head, payload);
    const { entries, bytes, skipped, renamed } = payload;
    const notes: string[] = [];
    if (skipped > 0)
      notes.push(`${skipped} entries the manifest lists are missing or damaged in the archive and were left out`);
    if (renamed > 0)
      notes.push(
        `${renamed} entries have another name in data/ than in the archive (made safe for any file system, or numbered where ` +
          `another entry's name was the same but for case); data/manifest.json lists each entry's path and sha256`,
      );
    if (job.serialize !== undefined) {
      // The payload and the four tag files: bagit.txt, bag-info.txt and the two manifests.
      const files = entries + 4;
      await serializeBag(bag, job.stem, join(job.out, file), job.serialize, job.signal, (done) =>
        job.onProgress?.({ step: 'serialize', done, total: files }),
      );
      return { file, entries, bytes, pages: 0, leftOut: skipped, notes };
    }
    const target = join(job.out, job.stem);
    // The command was given --force to write into a folder holding this name: the bag of an earlier run.
    if (await lstat(target).catch(() => undefined)) await rm(target, { recursive: true, force: true });
    await rename(bag, target);
    return { file: job.stem, entries, bytes, pages: 0, leftOut: skipped, notes };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * What may stand at the bag's name, which the run (given --force) replaces: nothing, an earlier
 * bag, or for a serialized bag a file; never the archive being converted nor a folder holding it.
 * The bag is named after the archive, so `--serialize zip` into the archive's own folder names
 * the archive itself, and a folder bag's name may be the folder the archive is in.
 */
async function checkTarget(job: PackageJob, target: string): Promise<void> {
  const found = await lstat(target).catch(() => undefined);
  if (found === undefined) return;
  const archive = await realpath(job.archive.path);
  const here = await realpath(target);
  const refuse = (what: string): never => {
    throw new RabbitError('OUTPUT_KIND', `${target} is ${what}, which the bag would replace`, {
      data: { found: what },
    });
  };
  if (here === archive) refuse('the archive being converted');
  if (archive.startsWith(`${here}${sep}`)) refuse('the folder holding the archive being converted');
  if (job.serialize !== undefined ? !found.isFile() : !(found.isDirectory() && (await isFile(join(target, BAGIT_TXT)))))
    refuse(job.serialize !== undefined ? 'not a file' : 'not a bag');
}

async function isFile(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isFile() === true;
}

/** The payload as written: the sha256 of its manifest, its files and bytes, and the entries left out. */
interface Payload {
  manifestSha: string;
  entries: number;
  bytes: number;
  skipped: number;
  /** Entries whose name in `data/` is not their path in the archive (made safe, or numbered). */
  renamed: number;
}

/**
 * Every entry the manifest lists under `data/`, read and checked one at a time as the manifest
 * streams by, then the manifest itself; the sha256 manifest written as the files are.
 */
async function writeBagPayload(job: PackageJob, bag: string): Promise<Payload> {
  const manifest = await HashedFile.create(join(bag, MANIFEST));
  const payload = { entries: 0, bytes: 0, skipped: 0, renamed: 0 };
  // Every entry of the zip, the manifest last.
  const total = job.archive.zip.index.size;
  let visited = 0;
  const put = async (entryPath: string, chunks: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> => {
    const { name, sha256, bytes } = await writePayload(bag, payloadNameOf(entryPath), chunks);
    if (name !== entryPath) payload.renamed++;
    await manifest.write(`${sha256}  data/${name}\n`);
    payload.entries++;
    payload.bytes += bytes;
  };
  try {
    await job.archive.manifest({
      async file(entry: FileEntry) {
        job.onProgress?.({ step: 'bodies', done: ++visited, total });
        const body = await packagedBody(job, entry);
        if (body === undefined) payload.skipped++;
        else await put(entry.path, [body]);
      },
    });
    // The manifest is the largest entry (hundreds of megabytes for a million resources): it streams
    // into its file, its CRC and size checked by the zip reader on the way, rather than being read whole.
    // The reader stops at the size the zip declares, so the declared size bounds what is written.
    const declared = job.archive.zip.entries.get(MANIFEST_PATH)?.uncompressedSize ?? 0;
    if (declared > MAX_MANIFEST_BYTES) {
      throw new RabbitError(
        'ARCHIVE_CORRUPT',
        `${MANIFEST_PATH} in ${job.archive.name} claims ${declared} bytes, more than the ${MAX_MANIFEST_BYTES} expected`,
        { entry: MANIFEST_PATH, data: { archive: job.archive.path } },
      );
    }
    await put(MANIFEST_PATH, (await job.archive.zip.openEntry(MANIFEST_PATH)) as AsyncIterable<Buffer>);
  } catch (error) {
    await manifest.abandon();
    throw error;
  }
  return { ...payload, manifestSha: await manifest.close() };
}

/** bagit.txt, bag-info.txt (with the Payload-Oxum of what was written) and the tag manifest. */
async function writeTagFiles(job: PackageJob, bag: string, head: ManifestHead, payload: Payload): Promise<void> {
  const date = job.now().toISOString().slice(0, 10);
  const tags: [string, string][] = [
    [BAGIT_TXT, DECLARATION],
    [
      BAG_INFO,
      [
        `Source-Organization: ${tagValue(head.source.baseUrl)}`,
        `External-Identifier: ${tagValue(`${head.source.baseUrl} account, exported to ${job.archive.name}`)}`,
        `External-Description: ${tagValue(
          `Every entry of ${job.archive.name}, exported by ${head.tool.name} ${head.tool.version} ` +
            `between ${head.startedAt} and ${head.finishedAt}; manifest.json lists what each was and where it was served from.`,
        )}`,
        `Bagging-Date: ${date}`,
        `Bag-Software-Agent: ${TOOL_NAME} ${TOOL_VERSION}`,
        `Payload-Oxum: ${payload.bytes}.${payload.entries}`,
        '',
      ].join('\n'),
    ],
  ];
  const tagLines = [`${payload.manifestSha}  ${MANIFEST}\n`];
  for (const [name, text] of tags) {
    await writeNew(join(bag, name), Buffer.from(text, 'utf8'));
    tagLines.push(`${createHash('sha256').update(text).digest('hex')}  ${name}\n`);
  }
  await writeNew(join(bag, TAG_MANIFEST), Buffer.from(tagLines.join(''), 'utf8'));
}

/**
 * A payload file under `data/`, created exclusively, written from `chunks`: the name it got, and
 * the sha256 and size of what was written. A name already taken gets a number, and so does a
 * folder on its way whose name a file already took (`a` and `a/b`, which ids a server chose can
 * make: `pages/x.json` of page `x` and `pages/x.json/elements.json` of page `x.json`).
 */
async function writePayload(
  bag: string,
  name: string,
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
): Promise<{ name: string; sha256: string; bytes: number }> {
  const { path, handle, candidate } = await createPayload(bag, name);
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      hash.update(chunk);
      bytes += chunk.length;
      await writeFully(handle, chunk, bytes - chunk.length);
    }
  } catch (error) {
    throw writeError(path, error);
  } finally {
    await handle.close();
  }
  return { name: candidate, sha256: hash.digest('hex'), bytes };
}

async function createPayload(
  bag: string,
  wanted: string,
): Promise<{ path: string; handle: FileHandle; candidate: string }> {
  const name = await freeFolders(join(bag, 'data'), wanted);
  for (let n = 1; n <= MAX_NUMBER; n++) {
    const candidate = n === 1 ? name : numberedName(name, n);
    const path = join(bag, 'data', candidate);
    try {
      return { path, handle: await createPrivateFile(path), candidate };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(path, error);
    }
  }
  throw new RabbitError('OUTPUT_UNWRITABLE', `no free name in the bag for ${name}`);
}

/** `name` with each of its folders made under `data`, numbered where a file holds the folder's name. */
async function freeFolders(data: string, name: string): Promise<string> {
  const folders = name.split('/');
  const file = folders.pop() as string;
  try {
    await mkdir(join(data, ...folders), { recursive: true, mode: 0o700 });
    return name;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw writeError(join(data, ...folders), error);
  }
  // Rare: walk down, making each folder or passing to a numbered one.
  const placed: string[] = [];
  for (const folder of folders) {
    placed.push(await freeFolder(join(data, ...placed), folder));
  }
  return [...placed, file].join('/');
}

async function freeFolder(parent: string, folder: string): Promise<string> {
  for (let n = 1; n <= MAX_NUMBER; n++) {
    const candidate = n === 1 ? folder : `${folder}-${n}`;
    const path = join(parent, candidate);
    const found = await lstat(path).catch(() => undefined);
    if (found?.isDirectory() === true) return candidate;
    if (found !== undefined) continue;
    await mkdir(path, { mode: 0o700 }).catch((error: unknown) => {
      throw writeError(path, error);
    });
    return candidate;
  }
  throw new RabbitError('OUTPUT_UNWRITABLE', `no free name in the bag for the folder ${folder} in ${parent}`);
}

async function writeNew(path: string, bytes: Buffer): Promise<void> {
  let handle;
  try {
    handle = await createPrivateFile(path);
    await handle.write(bytes);
  } catch (error) {
    throw writeError(path, error);
  } finally {
    await handle?.close();
  }
}

/** A tag value on one line (RFC 8493 2.2.2): no line breaks, whatever the manifest held. */
function tagValue(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
