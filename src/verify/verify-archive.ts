import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { isRabbitError } from '../core/errors.js';
import { isSafeEntryName } from '../archive/paths.js';
import type { ZipReader } from '../archive/zip-reader.js';
import { openZip, unsafeNameOf } from '../archive/zip-reader.js';
import type { FileEntry, Manifest } from '../manifest/types.js';
import { MANIFEST_PATH, allFileEntries } from '../manifest/types.js';
import { checkManifestShape } from '../manifest/manifest-shape.js';

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
  /** The manifest when it could be read and has the documented shape. */
  manifest: Manifest | null;
  /** Entries whose bytes were read and checked. */
  checked: number;
  /** Uncompressed bytes read while checking. */
  bytes: number;
  problems: VerifyProblem[];
}

export interface VerifyProgress {
  checked: number;
  total: number;
  bytes: number;
}

export interface VerifyOptions {
  onProgress?(progress: VerifyProgress): void;
}

/** A manifest bigger than this is not one we wrote (100 000 files make about 30 MB). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/**
 * Checks an archive against its own manifest: the zip structure, every listed file's presence, size
 * and SHA-256, every entry's CRC, and that nothing is in the zip that the manifest does not list.
 * Damage becomes a problem in the report, never a thrown error, so one bad entry does not hide
 * the state of the others. Entries are read once each, in archive order, streaming.
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
  for (const name of reader.entries.keys()) {
    if (!isSafeEntryName(name)) problems.push({ kind: 'unsafe-name', path: name, detail: 'not a plain relative path' });
  }

  report.manifest = await readManifest(reader, problems);
  const listed = report.manifest ? listedFiles(report.manifest, problems) : new Map<string, FileEntry>();

  const total = reader.entries.size;
  for (const info of reader.entries.values()) {
    const expected = listed.get(info.name);
    if (report.manifest && expected === undefined && info.name !== MANIFEST_PATH) {
      problems.push({ kind: 'unlisted', path: info.name, detail: 'in the zip but not listed in the manifest' });
    }
    const digest = await digestEntry(reader, info.name, problems);
    report.checked += 1;
    if (digest !== undefined) {
      report.bytes += digest.size;
      if (expected !== undefined) compare(expected, digest, problems);
    }
    options.onProgress?.({ checked: report.checked, total, bytes: report.bytes });
  }

  for (const entry of listed.values()) {
    if (!reader.entries.has(entry.path)) {
      problems.push({ kind: 'missing', path: entry.path, detail: 'listed in the manifest but not in the zip' });
    }
  }
}

async function readManifest(reader: ZipReader, problems: VerifyProblem[]): Promise<Manifest | null> {
  if (!reader.entries.has(MANIFEST_PATH)) {
    problems.push({
      kind: 'manifest-missing',
      path: MANIFEST_PATH,
      detail: `${basename(reader.path)} has no ${MANIFEST_PATH}; it was not written by rabbit-export or lost its index`,
    });
    return null;
  }
  const size = reader.entries.get(MANIFEST_PATH)?.uncompressedSize ?? 0;
  if (size > MAX_MANIFEST_BYTES) {
    problems.push({ kind: 'manifest-invalid', path: MANIFEST_PATH, detail: `${size} bytes, too large to be a manifest` });
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse((await reader.readEntry(MANIFEST_PATH)).toString('utf8'));
  } catch (error) {
    const detail = isRabbitError(error) ? error.message : `not valid JSON (${(error as Error).message})`;
    problems.push({ kind: isRabbitError(error) ? 'crc-error' : 'manifest-invalid', path: MANIFEST_PATH, detail });
    return null;
  }
  const issues = checkManifestShape(parsed);
  if (issues.length > 0) {
    const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
    problems.push({ kind: 'manifest-invalid', path: MANIFEST_PATH, detail: issues.slice(0, 3).join('; ') + more });
    return null;
  }
  return parsed as Manifest;
}

/** The manifest's file entries by path; a path listed twice or unsafe is itself a problem. */
function listedFiles(manifest: Manifest, problems: VerifyProblem[]): Map<string, FileEntry> {
  const byPath = new Map<string, FileEntry>();
  for (const entry of allFileEntries(manifest)) {
    if (byPath.has(entry.path)) {
      problems.push({ kind: 'duplicate', path: entry.path, detail: 'listed more than once in the manifest' });
      continue;
    }
    if (entry.path === MANIFEST_PATH) {
      problems.push({ kind: 'manifest-invalid', path: entry.path, detail: 'the manifest lists itself' });
      continue;
    }
    if (!isSafeEntryName(entry.path)) {
      problems.push({ kind: 'unsafe-name', path: entry.path, detail: 'the manifest lists a path that is not plain' });
    }
    byPath.set(entry.path, entry);
  }
  return byPath;
}

interface Digest {
  size: number;
  sha256: string;
}

/** Streams one entry through SHA-256; a CRC, inflate or size failure becomes a problem. */
async function digestEntry(reader: ZipReader, name: string, problems: VerifyProblem[]): Promise<Digest | undefined> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of await reader.openEntry(name)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch (error) {
    if (!isRabbitError(error)) throw error;
    // The reader's message names the entry and the zip; the problem line already does.
    const prefix = `${name} in ${basename(reader.path)} is `;
    const detail = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    problems.push({ kind: 'crc-error', path: name, detail });
    return undefined;
  }
  return { size, sha256: hash.digest('hex') };
}

function compare(expected: FileEntry, actual: Digest, problems: VerifyProblem[]): void {
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
