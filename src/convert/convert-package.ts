import { lstat, rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Archive } from '../archive/open-archive.js';
import { isRabbitError, RabbitError } from '../core/errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import type { ArchiveFormat, PackageCheck, PackageReport, PackageStep } from './formats/archive-format.js';
import type { WorkProgress } from '../core/counted-work.js';
import { safeNameOf } from './file-name.js';
import { REPORT_FILE, type ConvertReport } from './report.js';
import { makeFolder, writeAtomically } from './write-output.js';

export interface PackageOptions {
  out: string;
  serialize?: string;
  /** Read the package back once it is written (`--check`). */
  check?: boolean;
  now?: () => Date;
  signal?: AbortSignal;
  onProgress?: (progress: WorkProgress<PackageStep>) => void;
}

/**
 * The whole archive as one package (a WACZ, a bag) in `out`, with convert-report.json beside it;
 * read back when asked. The package is named after the archive's file.
 */
export async function convertToPackage(
  format: ArchiveFormat,
  archive: Archive,
  options: PackageOptions,
): Promise<ConvertReport> {
  checkSerialization(format, options.serialize);
  await makeFolder(options.out);
  const stem = safeNameOf(basename(archive.name).replace(/\.zip$/i, ''));
  const written = await format.writePackage({
    archive,
    out: options.out,
    stem,
    now: options.now ?? (() => new Date()),
    ...(options.serialize !== undefined ? { serialize: options.serialize } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
  });
  if (options.check === true) written.checked = await checkedPackage(format, options, written);
  const { notes, ...packaged } = written;
  const report: ConvertReport = {
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    archive: archive.path,
    to: format.name,
    rendering: true,
    complete: written.leftOut === 0,
    notes,
    prototypes: [],
    package: packaged,
  };
  await writeAtomically(join(options.out, REPORT_FILE), [`${JSON.stringify(report, null, 2)}\n`]);
  return report;
}

/**
 * The package read back. One that fails is set aside under a name that says so before the error
 * goes on: nothing at `--out` may look like a finished package when it is not one.
 */
async function checkedPackage(
  format: ArchiveFormat,
  options: PackageOptions,
  written: PackageReport,
): Promise<PackageCheck> {
  const report = options.onProgress;
  const path = join(options.out, written.file);
  report?.({ step: 'check', done: 0, total: written.entries });
  try {
    return await format.checkPackage(
      path,
      report && ((done) => report({ step: 'check', done, total: written.entries })),
    );
  } catch (error) {
    if (!isRabbitError(error, 'PACKAGE_INVALID')) throw error;
    const aside = await setAside(path);
    throw new RabbitError('PACKAGE_INVALID', `${error.message}; the package was moved to ${basename(aside)}`, {
      cause: error,
      data: { ...(error.data ?? {}), setAside: aside },
    });
  }
}

/** `team.wacz` -> `team.wacz.failed-check` (numbered when that name is taken): never replacing anything. */
async function setAside(path: string): Promise<string> {
  for (let n = 1; ; n++) {
    const aside = `${path}.failed-check${n === 1 ? '' : `-${n}`}`;
    if (await lstat(aside).catch(() => undefined)) continue;
    await rename(path, aside);
    return aside;
  }
}

/** `--serialize` only where the format has that serialization. */
export function checkSerialization(
  format: { name: string; serializations?: readonly string[] },
  serialize?: string,
): void {
  if (serialize === undefined) return;
  const allowed = format.serializations ?? [];
  if (!allowed.includes(serialize)) {
    throw new RabbitError(
      'USAGE',
      allowed.length === 0
        ? `--serialize does not apply to --to ${format.name} (only to bagit)`
        : `--serialize takes ${allowed.join(' or ')}, not ${JSON.stringify(serialize)}`,
    );
  }
}
