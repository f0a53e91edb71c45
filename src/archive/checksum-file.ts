import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { writeFileAtomic } from '../storage/atomic-file.js';

/**
 * Checksums of whole archive files in the format of GNU `sha256sum` (`<hex>  <name>\n`), so that a
 * copy can be checked anywhere without this tool: `sha256sum -c team.zip.sha256`. The sha256 of
 * every entry inside the zip is checked by `verify`; these check the file as a whole, as it was
 * written (the unit an off-site copy or a restore moves).
 */

export const SUMS_FILE = 'SHA256SUMS';

export function sidecarPath(archive: string): string {
  return `${archive}.sha256`;
}

/**
 * The sha256 of a whole file, read through one buffer. A read stream would hand over a fresh
 * buffer for every 64 KiB: hashed and dropped at once, but freed only when the garbage collector
 * next runs, which so little JavaScript work does not prompt: hashing the archive at the end of
 * an export that way made the run's peak memory (docs/design.md).
 */
export async function sha256OfFile(path: string, onRead?: (bytes: number, size: number) => void): Promise<string> {
  const hash = createHash('sha256');
  const handle = await openRegularFile(path);
  try {
    const buffer = Buffer.allocUnsafe(HASH_READ_BYTES);
    const size = onRead ? (await handle.stat()).size : 0;
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      read += bytesRead;
      onRead?.(read, size);
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

const HASH_READ_BYTES = 1024 * 1024;

/**
 * Opens a file to read only when it is a regular file: O_NONBLOCK so a FIFO someone left under the
 * name cannot hang the open, then fstat on what was opened, so a FIFO or device is refused (EISDIR,
 * as for a folder: "no file to read here") rather than read forever.
 */
async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile())
      throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EISDIR' });
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return handle;
}

/**
 * One line of a sums file. A name with a backslash or a line break is escaped and the line starts
 * with a backslash, as sha256sum itself writes it.
 */
export function sumLine(sha256: string, name: string): string {
  if (!/[\\\n\r]/.test(name)) return `${sha256}  ${name}\n`;
  const escaped = name.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
  return `\\${sha256}  ${escaped}\n`;
}

/** Writes `ARCHIVE.sha256` naming the archive by its base name, so the pair can move together. */
export async function writeSidecar(archive: string, sha256: string): Promise<string> {
  const path = sidecarPath(archive);
  await writeFileAtomic(path, sumLine(sha256, basename(archive)));
  return path;
}

/** The sums file of a folder: one line per archive, sorted by name. */
export async function writeSumsFile(path: string, sums: ReadonlyMap<string, string>): Promise<void> {
  const names = [...sums.keys()].sort();
  await writeFileAtomic(path, names.map((name) => sumLine(sums.get(name) as string, name)).join(''));
}

/** The sha256 a sidecar records for `archive`, undefined when there is none, null when it is not a sha256sum line. */
export async function readSidecar(archive: string): Promise<string | null | undefined> {
  let text: string;
  try {
    const handle = await openRegularFile(sidecarPath(archive));
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A FIFO or folder under the sidecar's name is no sidecar: not a sha256sum line.
    if (code === 'EISDIR') return null;
    throw error;
  }
  // The hash of the first line; the name after it is not compared, so a renamed pair still checks.
  const hex = /^\\?([0-9a-fA-F]{64}) [ *]\S/.exec(text)?.[1];
  return hex === undefined ? null : hex.toLowerCase();
}

export type SidecarCheck =
  | { status: 'missing' }
  | { status: 'ok'; sha256: string }
  | { status: 'mismatch'; expected: string; actual: string }
  | { status: 'malformed' };

/** Compares an archive's bytes with its sidecar, when it has one; `onRead` hears how far the hashing is. */
export async function checkSidecar(
  archive: string,
  onRead?: (bytes: number, size: number) => void,
): Promise<SidecarCheck> {
  const expected = await readSidecar(archive);
  if (expected === undefined) return { status: 'missing' };
  if (expected === null) return { status: 'malformed' };
  let actual: string;
  try {
    actual = await sha256OfFile(archive, onRead);
  } catch (error) {
    // No archive to compare (verify has already said so): the sidecar has nothing to add.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return { status: 'missing' };
    throw error;
  }
  return actual === expected ? { status: 'ok', sha256: actual } : { status: 'mismatch', expected, actual };
}
