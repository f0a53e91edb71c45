import type { Archive } from '../../archive/open-archive.js';
import type { WorkProgress } from '../../core/counted-work.js';

/**
 * An output of `convert --to` made of the whole archive at once rather than of each prototype: a
 * package for whoever keeps things after the service is gone (a web archive, a bag). It is a file
 * in this folder that implements this, and a line in registry.ts, like a document format.
 */
export interface ArchiveFormat {
  readonly name: string;
  /** What the archive becomes, for `--help`. */
  readonly help: string;
  /** What the closing line says was written: "a WACZ web archive". */
  readonly written: string;
  /** The `--out` folder of the example in `--help`. */
  readonly exampleOut: string;
  /** The serializations `--serialize` may ask for (none: the flag is refused for this format). */
  readonly serializations: readonly string[];
  /** Writes the package into `job.out`: the file or folder written, relative to it, and what it holds. */
  writePackage(job: PackageJob): Promise<PackageReport>;
  /**
   * Reads a written package back and throws PACKAGE_INVALID at the first thing that does not hold;
   * `onChecked` hears how many of its entries (records, payload files) are checked so far.
   */
  checkPackage(path: string, onChecked?: (entries: number) => void): Promise<PackageCheck>;
}

/**
 * How far a package is: its bodies read from the archive and written (of the entries the zip
 * holds), the pages walked for the page list (WACZ, by prototype), the rest of it written (index,
 * tag files, the zip around it: nothing counted), its files put into one zip or tar (a serialized
 * bag), then its entries read back (--check).
 */
export type PackageStep = 'bodies' | 'pages' | 'finish' | 'serialize' | 'check';

export interface PackageJob {
  archive: Archive;
  /** The output folder (made and owned by the run). */
  out: string;
  /** The package's name without extension: the archive's file name without `.zip`. */
  stem: string;
  /** One of the format's `serializations`, when asked for. */
  serialize?: string;
  /** The clock of the run (package dates). */
  now: () => Date;
  signal?: AbortSignal;
  onProgress?: (progress: WorkProgress<PackageStep>) => void;
}

export interface PackageReport {
  /** The file or folder written, relative to the output folder. */
  file: string;
  /** Bodies packaged (WARC records, or payload files of a bag). */
  entries: number;
  /** Their bytes. */
  bytes: number;
  /** Pages listed for replay and search (WACZ); 0 where a format lists none. */
  pages: number;
  /**
   * Bodies the manifest lists that were missing or damaged in the archive and are not in the
   * package: the package is then not the whole archive, and the run says so (incomplete, exit 3).
   */
  leftOut: number;
  /** Said once for the package: what it holds differently from the archive. */
  notes: string[];
  /** Set when the package was read back (`--check`). */
  checked?: PackageCheck;
}

export interface PackageCheck {
  /** Files whose digests were recomputed and matched. */
  files: number;
  /** Records (WACZ) or payload files (bag) read back and matched. */
  entries: number;
}

export function isArchiveFormat(format: object): format is ArchiveFormat {
  return 'writePackage' in format;
}
