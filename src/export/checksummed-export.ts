import { sha256OfFile, writeSidecar } from '../archive/checksum-file.js';
import { exportAccount, type ExportOptions, type ExportResult } from './export-account.js';

/** An export's result with the sha256 of the archive file as a whole. */
export type ChecksummedResult = ExportResult & { sha256: string };

/**
 * `export --out FILE`: the archive, then `FILE.sha256` beside it, so the file can be checked with
 * `sha256sum -c` wherever it is copied. The sidecar is written after the archive is in place; a run
 * killed in between leaves an archive without one, which verify accepts.
 */
export async function exportWithSidecar(options: ExportOptions): Promise<ChecksummedResult> {
  const result = await exportAccount(options);
  const sha256 = await sha256OfFile(result.out);
  await writeSidecar(result.out, sha256);
  return { ...result, sha256 };
}
