import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { verifyArchive } from '../verify/verify-archive.js';
import { exportAccount, type ExportOptions, type ExportResult } from './export-account.js';

/**
 * An export built whole in a work folder before it goes anywhere else (`export --out -`, piped to
 * age, rclone rcat or restic): the zip, its spool and its journal live in `workDir`, so a run that
 * is interrupted resumes like any export when the same command runs again, and nothing leaves the
 * machine before the archive is finished and has passed `verify`.
 */
export interface StagedExportOptions extends Omit<ExportOptions, 'out' | 'force'> {
  workDir: string;
}

export interface StagedExport {
  result: ExportResult;
  /** The finished, verified archive in the work folder; the caller sends it on, then discards it. */
  path: string;
}

/**
 * The archive's name in the work folder: one per service and selection, so that two different
 * exports through one work folder neither share a journal nor lock each other out, and the same
 * command run again finds its own. It holds no key.
 */
export function stagedName(options: Pick<ExportOptions, 'baseUrl' | 'prototypes' | 'formats'>): string {
  const selection = [
    options.baseUrl,
    [...(options.prototypes ?? [])].sort().join(','),
    [...(options.formats ?? [])].sort().join(','),
  ].join('\n');
  return `export-${createHash('sha256').update(selection).digest('hex').slice(0, 16)}.zip`;
}

export async function exportStaged(options: StagedExportOptions): Promise<StagedExport> {
  const { workDir, ...exportOptions } = options;
  const dir = resolve(workDir);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the work folder ${dir}`, { cause: error });
  }
  const path = join(dir, stagedName(exportOptions));
  // A finished archive left by a run whose reader went away is replaced: it was never sent whole.
  const result = await exportAccount({ ...exportOptions, out: path, force: true });
  const report = await verifyArchive(path);
  if (!report.ok) {
    await discardStaged(path);
    const first = report.problems[0];
    throw new RabbitError(
      'ARCHIVE_CORRUPT',
      `the finished archive failed verify in ${dir}, so nothing was sent: ${first?.detail ?? 'unknown problem'}`,
    );
  }
  return { result, path };
}

export async function discardStaged(path: string): Promise<void> {
  await rm(path, { force: true });
}
