import { createHash } from 'node:crypto';
import { isRabbitError, type RabbitError } from '../core/errors.js';
import { isSafeEntryName } from '../api/paths.js';
import { NOT_A_FILE, type ZipEntryInfo } from '../zip/zip-reader.js';
import { openArchive, type Archive } from '../archive/open-archive.js';
import type { FileEntry, ManifestError } from '../manifest/types.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import type { ManifestHead } from '../manifest/manifest-stream.js';

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
  | 'unsafe-name'
  /** A symlink or device entry: extracted, it would not be the data the manifest lists. */
  | 'not-a-file'
  /** An entry's data lies in another entry's part of the zip, or in its directory (a zip crafted to inflate one stream many times). */
  | 'overlap'
  /** An entry inflates past the size the zip declares for it: refused at the first byte too many. */
  | 'too-large';

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
  /** The problems found, the first KEPT_PROBLEMS of them: see problemCount for all. */
  problems: VerifyProblem[];
  /** Every problem found, also those past the ones listed. */
  problemCount: number;
  /**
   * Why the zip could not be opened, or its manifest read: the error a reader refusing the archive
   * meets, so that verify's next step is theirs (not part of --json).
   */
  stoppedBy?: RabbitError;
}

/**
 * Problems a report lists at most; past them they are only counted. A crafted zip of a million
 * entries its manifest does not list would otherwise hold a million problems in memory, and a
 * thousand lines already say what is wrong with an archive.
 */
export const KEPT_PROBLEMS = 1000;

/** Problems as they are found: the first KEPT_PROBLEMS kept, every one counted. */
class Problems {
  readonly kept: VerifyProblem[] = [];
  count = 0;
  push(...problems: VerifyProblem[]): void {
    for (const problem of problems) {
      this.count += 1;
      if (this.kept.length < KEPT_PROBLEMS) this.kept.push(problem);
    }
  }
  /** Another list's problems after these, counted as they were. */
  append(other: Problems): void {
    for (const problem of other.kept) if (this.kept.length < KEPT_PROBLEMS) this.kept.push(problem);
    this.count += other.count;
  }
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
  const problems = new Problems();
  const report: VerifyReport = {
    ok: false,
    path,
    manifest: null,
    checked: 0,
    bytes: 0,
    problems: problems.kept,
    problemCount: 0,
  };
  let archive: Archive;
  try {
    archive = await openArchive(path);
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    // openZip refuses an entry by name when its name could escape the extract folder, or when it
    // would extract as a symlink or device.
    problems.push(
      error.entry === undefined
        ? { kind: 'not-a-zip', detail: error.message }
        : {
            kind: error.reason === NOT_A_FILE ? 'not-a-file' : 'unsafe-name',
            path: error.entry,
            detail: error.message,
          },
    );
    report.problemCount = problems.count;
    report.stoppedBy = error;
    return report;
  }
  try {
    await check(archive, report, problems, options);
  } finally {
    archive.close();
  }
  report.problemCount = problems.count;
  report.ok = problems.count === 0;
  return report;
}

async function check(
  archive: Archive,
  report: VerifyReport,
  problems: Problems,
  options: VerifyOptions,
): Promise<void> {
  const reader = archive.zip;
  for (const name of reader.duplicates) {
    problems.push({ kind: 'duplicate', path: name, detail: 'the zip holds more than one entry with this name' });
  }
  const { index } = reader;
  const total = index.size;
  const checked = new Bitset(index.count);
  const digestAt = async (position: number, entry: ZipEntryInfo): Promise<Digest | undefined> => {
    checked.add(position);
    const digest = await digestEntry(reader, entry, problems);
    report.checked += 1;
    if (digest !== undefined) report.bytes += digest.size;
    options.onProgress?.({ checked: report.checked, total, bytes: report.bytes });
    return digest;
  };

  const listed = await readManifest(archive, report, problems, digestAt);
  report.manifest = listed?.manifest ?? null;
  const manifest = listed ? index.lookup(MANIFEST_PATH) : undefined;
  if (manifest) {
    // Read to its end without a fault, so its size and CRC are checked already: not read a second time.
    checked.add(manifest.position);
    report.checked += 1;
    report.bytes += manifest.record.uncompressedSize;
    options.onProgress?.({ checked: report.checked, total, bytes: report.bytes });
  }
  // What the manifest did not list (or all of it, when the manifest is unreadable) is still CRC-checked.
  for (const { position, record } of index.records()) {
    if (index.isRepeat(position)) continue;
    if (!isSafeEntryName(record.name))
      problems.push({ kind: 'unsafe-name', path: record.name, detail: 'not a plain relative path' });
    if (listed && !listed.positions.has(position) && record.name !== MANIFEST_PATH) {
      problems.push({ kind: 'unlisted', path: record.name, detail: 'in the zip but not listed in the manifest' });
    }
    if (!checked.has(position)) await digestAt(position, record);
  }
  if (listed) problems.append(listed.missing);
}

type DigestAt = (position: number, entry: ZipEntryInfo) => Promise<Digest | undefined>;

interface Listed {
  manifest: VerifiedManifest;
  /** Zip index positions the manifest lists. */
  positions: Bitset;
  /** Entries listed but absent from the zip, reported after the zip's own entries. */
  missing: Problems;
}

/**
 * Streams the manifest and checks each listed entry as it comes by (located through the compact
 * zip index, a bit per position marking it listed), so nothing per entry is kept but bits. What
 * it finds is only reported once the whole manifest has proved to be one: a manifest that turns
 * out damaged at its end is reported alone, as it would be had it been read first.
 */
async function readManifest(
  archive: Archive,
  report: VerifyReport,
  problems: Problems,
  digestAt: DigestAt,
): Promise<Listed | null> {
  const { index } = archive.zip;
  const positions = new Bitset(index.count);
  const found = new Problems();
  const missing = new Problems();
  const missingPaths = new Set<string>();
  const errors: ManifestError[] = [];
  const file = async (entry: FileEntry): Promise<void> => {
    if (entry.path === MANIFEST_PATH) {
      found.push({ kind: 'manifest-invalid', path: entry.path, detail: 'the manifest lists itself' });
      return;
    }
    const hit = index.lookup(entry.path);
    if (hit && positions.has(hit.position)) {
      found.push({ kind: 'duplicate', path: entry.path, detail: 'listed more than once in the manifest' });
      return;
    }
    if (!isSafeEntryName(entry.path)) {
      found.push({ kind: 'unsafe-name', path: entry.path, detail: 'the manifest lists a path that is not plain' });
    }
    if (!hit) {
      // The zip index cannot tell a missing path listed twice; the set of missing ones (problems anyway) can.
      if (missingPaths.has(entry.path)) {
        found.push({ kind: 'duplicate', path: entry.path, detail: 'listed more than once in the manifest' });
      } else {
        // Up to as many as are listed: past them a path listed twice is counted as missing twice, a problem either way.
        if (missingPaths.size < KEPT_PROBLEMS) missingPaths.add(entry.path);
        missing.push({ kind: 'missing', path: entry.path, detail: 'listed in the manifest but not in the zip' });
      }
      return;
    }
    positions.add(hit.position);
    const digest = await digestAt(hit.position, hit.record);
    if (digest !== undefined) compare(entry, digest, found);
  };
  const read = await archive.tryManifest({ file, error: (error) => void errors.push(error) });
  if (!read.ok) {
    const kind =
      read.fault === 'missing' ? 'manifest-missing' : read.fault === 'damaged' ? 'crc-error' : 'manifest-invalid';
    problems.push({ kind, path: MANIFEST_PATH, detail: read.error.reason ?? read.error.message });
    report.stoppedBy = read.error;
    return null;
  }
  problems.append(found);
  return { manifest: { ...read.head, errors }, positions, missing };
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
async function digestEntry(
  reader: Archive['zip'],
  entry: ZipEntryInfo,
  problems: Problems,
): Promise<Digest | undefined> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of await reader.openEntry(entry)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    // The problem line names the entry already: the reason alone says what is wrong with it.
    const fault = error.data?.fault;
    const kind = fault === 'overlap' || fault === 'too-large' ? fault : 'crc-error';
    problems.push({ kind, path: entry.name, detail: error.reason ?? error.message });
    return undefined;
  }
  return { size, sha256: hash.digest('hex') };
}

function compare(expected: FileEntry, actual: Digest, problems: Problems): void {
  if (actual.size !== expected.size) {
    problems.push({
      kind: 'size-mismatch',
      path: expected.path,
      detail: `${actual.size} bytes in the zip, ${expected.size} in the manifest`,
    });
  } else if (actual.sha256 !== expected.sha256) {
    problems.push({
      kind: 'sha256-mismatch',
      path: expected.path,
      detail: `SHA-256 ${actual.sha256.slice(0, 12)}… in the zip, ${expected.sha256.slice(0, 12)}… in the manifest`,
    });
  }
}
