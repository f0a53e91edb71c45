import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { ensurePrivateDir, openOwnFile, unsafePath } from '../core/private-files.js';
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
  /** The finished, verified archive in the work folder; the caller discards it once sent. */
  path: string;
  /**
   * The archive, opened once (never through a symlink, the user's own regular file) before it was
   * verified: what is sent is read from this handle, so no name swapped in the folder after verify
   * changes what goes out. The caller closes it.
   */
  handle: FileHandle;
}

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
    // The parents as for any cache folder; the work folder itself must be the user's alone, or
    // another user could swap the finished archive for a link to any file before it is sent.
    await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
    await ensurePrivateDir(dir, 'the work folder');
  } catch (error) {
    if (error instanceof RabbitError) throw error;
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the work folder ${dir}`, { cause: error });
  }
  const path = join(dir, stagedName(exportOptions));
  // A finished archive left by a run whose reader went away is replaced: it was never sent whole.
  const result = await exportAccount({ ...exportOptions, out: path, force: true });
  const handle = await openOwnFile(path, constants.O_RDONLY, 'the staged archive');
  try {
    const report = await verifyArchive(path);
    if (!report.ok) {
      await discardStaged(path);
      const first = report.problems[0];
      throw new RabbitError(
        'ARCHIVE_CORRUPT',
        `the finished archive failed verify in ${dir}, so nothing was sent: ${first?.detail ?? 'unknown problem'}`,
      );
    }
    // What verify read by name must be the file held open, still at that name.
    const [held, named] = await Promise.all([handle.stat(), lstat(path)]);
    if (held.ino !== named.ino || held.dev !== named.dev)
      throw unsafePath('the staged archive', path, 'was replaced while it was verified');
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return { result, path, handle };
}

export async function discardStaged(path: string): Promise<void> {
  await rm(path, { force: true });
}
