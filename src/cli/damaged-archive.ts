import { basename, dirname } from 'node:path';
import type { RabbitError } from '../core/errors.js';
import { shellQuote, shellWords } from './format.js';

/**
 * What to do with an archive that cannot be read as it was written: cut short, damaged inside, or
 * a zip rabbit-export did not write. The same words for every reader that refuses one (through the
 * error guide) and under verify's FAILED, so a person meets one piece of advice, whichever command
 * found the damage.
 */
export interface DamagedArchive {
  /** The archive's path as the command was given it. */
  archive: string;
  /** `rabbit-export verify` names more than the refusal did (every damaged entry, the .sha256): not said by verify itself. */
  verify: boolean;
  /** The fault may mean rabbit-export never wrote the zip (no manifest, not one, an entry no export writes). */
  foreign: boolean;
}

/**
 * A copy is what goes wrong most often (a download or a sync cut short, a disk that lost a block):
 * the file's sha256, written beside it at export as NAME.sha256 in sha256sum's format, tells a good
 * copy from a bad one without this tool. That file names the archive without its folder, so the
 * check runs in the archive's folder.
 */
export function damagedArchiveStep({ archive, verify, foreign }: DamagedArchive): string {
  const name = basename(archive);
  const folder = dirname(archive);
  const sidecar = `${name}.sha256`;
  const check = shellWords('sha256sum', '-c', sidecar);
  const inFolder = folder === '.' ? check : `cd ${shellQuote(folder)} && ${check}`;
  return (
    `if ${name} is a copy, copy it again, with the ${sidecar} written beside the original at export, and check ` +
    `the new copy (${inFolder}); with no good copy, export again` +
    (verify ? `. ${shellWords('rabbit-export', 'verify', archive)} names what is damaged` : '') +
    (foreign ? '; a zip that rabbit-export did not write is not one to read with it' : '')
  );
}

/**
 * An archive of a format newer than this version reads is not damaged: its message says to update,
 * and nothing here may say otherwise.
 */
export const NEWER_FORMAT_STEP =
  'install a newer release of rabbit-export (rabbit-export --version says which this one is), then run the same command again';

/**
 * The next step for a reader's ARCHIVE_CORRUPT or NOT_A_ZIP, from what the error says of the archive
 * (`archive`, `foreign`, `newerFormat` in its data); none for an error that names no archive file
 * (a path that does not exist, a folder, an archive the tool is still writing). A file that is no
 * zip for want of its end (NOT_A_ZIP) is not sent to verify, which could say no more of it.
 */
export function damagedArchiveNext(
  error: RabbitError,
  { verify = true }: { verify?: boolean } = {},
): string | undefined {
  if (error.data?.['newerFormat'] === true) return NEWER_FORMAT_STEP;
  const archive = error.data?.['archive'];
  if (typeof archive !== 'string') return undefined;
  return damagedArchiveStep({
    archive,
    verify: verify && error.code === 'ARCHIVE_CORRUPT',
    foreign: error.data?.['foreign'] === true,
  });
}
