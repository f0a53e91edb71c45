import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { isRabbitError } from '../core/errors.js';
import { isSafeEntryName } from '../archive/paths.js';
import type { ZipEntryInfo, ZipReader } from '../archive/zip-reader.js';
import { openZip, unsafeNameOf } from '../archive/zip-reader.js';
import type { FileEntry, ManifestError } from '../manifest/types.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import { ManifestReadError, streamManifest, type ManifestHead } from '../manifest/manifest-stream.js';

export type ProblemKind =
  | 'not-a-zip'
  | 'manifest-missing'
  | 'manifest-invalid'
  | 'missing'
  | 'size-mismatch'
  | 'sha256-mismatch'
  | 'crc-error'
  | 'unlisted'
  | 'duplicate'
  | 'unsafe-name';

export interface VerifyProblem {
  kind: ProblemKind;
  /** The entry the problem is about, when there is one. */
  path?: string;
  detail: string;
}

export interface VerifyReport {
  /** True only when there are no problems; an incomplete export can still be ok. */
  ok: boolean;
  path: string;
  /** The manifest's head and errors when it could be read and has the documented shape. */
  manifest: VerifiedManifest | null;
  /** Entries whose bytes were read and checked. */
  checked: number;
  /** Uncompressed bytes read while checking. */
  bytes: number;
  problems: VerifyProblem[];
}

/** What verify keeps of a manifest: everything but the file entries and foreign references. */
export type VerifiedManifest = ManifestHead & { errors: ManifestError[] };

export interface VerifyProgress {
  checked: number;
  total: number;
  bytes: number;
}

export interface VerifyOptions {
  onProgress?(progress: VerifyProgress): void;
}

/**
 * Checks an archive against its own manifest: the zip structure, every listed file's presence, size
 * and SHA-256, every entry's CRC, and that nothing is in the zip that the manifest does not list.
 * Damage becomes a problem in the report, never a thrown error, so one bad entry does not hide
 * the state of the others. Entries are read once each, in archive order, streaming; the manifest
 * streams by once before, joined against the zip's compact index, so memory stays flat.
 */
export async function verifyArchive(path: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const report: VerifyReport = { ok: false, path, manifest: null, checked: 0, bytes: 0, problems: [] };
  let reader: ZipReader;
  try {
    reader = await openZip(path);
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    const unsafe = unsafeNameOf(error);
    report.problems.push(
      unsafe === undefined
        ? { kind: 'not-a-zip', detail: error.message }
        : { kind: 'unsafe-name', path: unsafe, detail: error.message },
    );
    return report;
  }
  try {
    await check(reader, report, options);
  } finally {
    reader.close();
  }
  report.ok = report.problems.length === 0;
  return report;
}

async function check(reader: ZipReader, report: VerifyReport, options: VerifyOptions): Promise<void> {
  const { problems } = report;
  for (const name of reader.duplicates) {
    problems.push({ kind: 'duplicate', path: name, detail: 'the zip holds more than one entry with this name' });
  }
  const expected = await readManifest(reader, problems);
  report.manifest = expected?.manifest ?? null;

  const { index } = reader;
  const total = index.size;
  for (const { position, record } of index.records()) {
    if (index.isRepeat(position)) continue;
    if (!isSafeEntryName(record.name)) problems.push({ kind: 'unsafe-name', path: record.name, detail: 'not a plain relative path' });
    const listed = expected?.listed.has(position) ?? false;
    if (expected && !listed && record.name !== MANIFEST_PATH) {
      problems.push({ kind: 'unlisted', path: record.name, detail: 'in the zip but not listed in the manifest' });
    }
    const digest = await digestEntry(reader, record, problems);
    report.checked += 1;
    if (digest !== undefined) {
      report.bytes += digest.size;
      if (expected && listed) compare(record.name, expected, position, digest, problems);
    }
    options.onProgress?.({ checked: report.checked, total, bytes: report.bytes });
  }
  if (expected) problems.push(...expected.missing);
}

/**
 * What the manifest says of each zip entry, kept by the entry's position in the compact zip index
 * (32 bytes of sha256 and a size each) rather than as objects: the manifest streams by once and
 * is joined against the index as it goes.
 */
interface Expected {
  manifest: VerifiedManifest;
  listed: Bitset;
  sha256: Uint8Array;
  sizes: Float64Array;
  /** Entries listed but absent from the zip, reported after the zip's own entries. */
  missing: VerifyProblem[];
}

async function readManifest(reader: ZipReader, problems: VerifyProblem[]): Promise<Expected | null> {
  if (!reader.entries.has(MANIFEST_PATH)) {
    problems.push({
      kind: 'manifest-missing',
      path: MANIFEST_PATH,
      detail: `${basename(reader.path)} has no ${MANIFEST_PATH}; it was not written by rabbit-export or lost its index`,
    });
    return null;
  }
  const { index } = reader;
  const listed = new Bitset(index.count);
  const sha256 = new Uint8Array(index.count * 32);
  const sizes = new Float64Array(index.count);
  const found: VerifyProblem[] = [];
  const missing: VerifyProblem[] = [];
  const missingPaths = new Set<string>();
  const errors: ManifestError[] = [];
  const file = (entry: FileEntry): void => {
    if (entry.path === MANIFEST_PATH) {
      found.push({ kind: 'manifest-invalid', path: entry.path, detail: 'the manifest lists itself' });
      return;
    }
    const position = index.find(entry.path);
    if (position !== -1 && listed.has(position)) {
      found.push({ kind: 'duplicate', path: entry.path, detail: 'listed more than once in the manifest' });
      return;
    }
    if (!isSafeEntryName(entry.path)) {
      found.push({ kind: 'unsafe-name', path: entry.path, detail: 'the manifest lists a path that is not plain' });
    }
    if (position === -1) {
      // The zip index cannot tell a missing path listed twice; the set of missing ones (problems anyway) can.
      if (missingPaths.has(entry.path)) {
        found.push({ kind: 'duplicate', path: entry.path, detail: 'listed more than once in the manifest' });
      } else {
        missingPaths.add(entry.path);
        missing.push({ kind: 'missing', path: entry.path, detail: 'listed in the manifest but not in the zip' });
      }
      return;
    }
    listed.add(position);
    sha256.set(Buffer.from(entry.sha256, 'hex'), position * 32);
    sizes[position] = entry.size;
  };
  let head;
  try {
    head = await streamManifest(await reader.openEntry(MANIFEST_PATH), { file, error: (error) => void errors.push(error) });
  } catch (error) {
    if (isRabbitError(error)) {
      problems.push({ kind: 'crc-error', path: MANIFEST_PATH, detail: error.message });
      return null;
    }
    if (!(error instanceof ManifestReadError)) throw error;
    problems.push({ kind: 'manifest-invalid', path: MANIFEST_PATH, detail: error.message });
    return null;
  }
  problems.push(...found);
  return { manifest: { ...head, errors }, listed, sha256, sizes, missing };
}

class Bitset {
  private readonly bits: Uint8Array;
  constructor(size: number) {
    this.bits = new Uint8Array((size + 7) >> 3);
  }
  has(i: number): boolean {
    return ((this.bits[i >> 3] as number) & (1 << (i & 7))) !== 0;
  }
  add(i: number): void {
    this.bits[i >> 3] = (this.bits[i >> 3] as number) | (1 << (i & 7));
  }
}

interface Digest {
  size: number;
  sha256: string;
}

/** Streams one entry through SHA-256; a CRC, inflate or size failure becomes a problem. */
async function digestEntry(reader: ZipReader, entry: ZipEntryInfo, problems: VerifyProblem[]): Promise<Digest | undefined> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of await reader.openEntry(entry)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    // The reader's message names the entry and the zip; the problem line already does.
    const prefix = `${entry.name} in ${basename(reader.path)} is `;
    const detail = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    problems.push({ kind: 'crc-error', path: entry.name, detail });
    return undefined;
  }
  return { size, sha256: hash.digest('hex') };
}

function compare(path: string, expected: Expected, position: number, actual: Digest, problems: VerifyProblem[]): void {
  const size = expected.sizes[position] as number;
  const sha256 = Buffer.from(expected.sha256.subarray(position * 32, position * 32 + 32)).toString('hex');
  if (actual.size !== size) {
    problems.push({ kind: 'size-mismatch', path, detail: `${actual.size} bytes in the zip, ${size} in the manifest` });
  } else if (actual.sha256 !== sha256) {
    problems.push({
      kind: 'sha256-mismatch',
      path,
      detail: `SHA-256 ${actual.sha256.slice(0, 12)}… in the zip, ${sha256.slice(0, 12)}… in the manifest`,
    });
  }
}
