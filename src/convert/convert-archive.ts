import { join } from 'node:path';
import { refuseUnheld } from '../api/held-prototypes.js';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import { openArchive } from '../archive/open-archive.js';
import type { ArchiveCatalog } from '../archive/archive-catalog.js';
import { convertPrototype } from './convert-prototype.js';
import { checkSerialization, convertToPackage } from './convert-package.js';
import { isArchiveFormat, type PackageStep } from './formats/archive-format.js';
import type { WorkProgress } from '../core/counted-work.js';
import { DEFAULT_FORMAT, FORMATS, formatNamed, type OutputFormat } from './formats/registry.js';
import { RabbitError } from '../core/errors.js';
import { emptyPrototypeReport, REPORT_FILE, type ConvertReport, type PrototypeReport } from './report.js';
import { makeFolder, writeAtomically } from './write-output.js';
import { parseEntryPath, parseSource } from '../api/entry-paths.js';

export interface ConvertOptions {
  /** The archive to read; it is opened read-only and never changed. */
  archive: string;
  /** Folder for the documents and convert-report.json; created when missing. */
  out: string;
  /** The name of a format in formats/registry.ts (default: draw.io documents). */
  to?: string;
  /** Only these prototype ids (default: every prototype in the archive). */
  prototypes?: readonly string[];
  /** Embed each page's PNG on a locked Rendering layer (default true). */
  rendering?: boolean;
  /** A package format's serialization (bagit: zip or tar). */
  serialize?: string;
  /** Read a package back once it is written. */
  check?: boolean;
  /** The clock for package dates (default: the system's). */
  now?: () => Date;
  onEvent?: (event: ConvertEvent) => void;
  /** How far the conversion is: see ConvertStep. */
  onProgress?: (progress: WorkProgress<ConvertStep>) => void;
  /** Stops between pages; the document being written is removed, finished ones stay. */
  signal?: AbortSignal;
}

export type ConvertEvent = { type: 'prototype-converted'; report: PrototypeReport };

/**
 * The steps of a conversion: the manifest read into the catalog (entries, no total), then the
 * documents (counted in the archive's entries of the prototypes converted, so that a prototype of
 * a thousand pages weighs what it costs); or a package's steps (archive-format.ts).
 */
export type ConvertStep = 'manifest' | 'documents' | PackageStep;

/**
 * Writes one document (or folder of pages) per prototype in the format asked for, one prototype at
 * a time and one page at a time into it, so memory follows the biggest page rather than the archive.
 */
export async function convertArchive(options: ConvertOptions): Promise<ConvertReport> {
  const to = options.to ?? DEFAULT_FORMAT;
  const format = formatNamed(to);
  if (!isArchiveFormat(format)) checkSerialization(format, options.serialize);
  refuseUnusedFlags(format, options);
  const archive = await openArchive(options.archive);
  try {
    if (isArchiveFormat(format)) {
      return await convertToPackage(format, archive, {
        out: options.out,
        ...(options.serialize !== undefined ? { serialize: options.serialize } : {}),
        ...(options.check !== undefined ? { check: options.check } : {}),
        ...(options.now !== undefined ? { now: options.now } : {}),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      });
    }
    const progress = options.onProgress;
    let read = 0;
    const seen = { pages: false, renderings: false };
    // The manifest streams by once into a catalog on disk: one prototype's entries are found there
    // as they are asked for, so memory follows neither the account nor the biggest prototype.
    const catalog = await archive.catalog({
      visitor: {
        file(entry, owner) {
          progress?.({ step: 'manifest', done: ++read, total: null });
          if (owner === null) return;
          const kind = parseEntryPath(entry.path)?.kind;
          if (kind === 'page') seen.pages = true;
          else if (kind === 'page-png') seen.renderings = true;
        },
        // A rendering the export asked for and could not fetch is missing; one never asked for is not.
        error(error) {
          if (parseSource(error.source)?.kind === 'page-png') seen.renderings = true;
        },
      },
    });
    try {
      // The manifest does not record the export's --formats: pages without a single rendering
      // listed or failed are an export without PNG, which loses nothing here.
      const asked = options.rendering ?? true;
      const notExported = asked && seen.pages && !seen.renderings;
      const rendering = asked && !notExported;
      const ids = selectPrototypes(catalog.prototypeIds(), options.prototypes, options.archive);
      await makeFolder(options.out);
      const report: ConvertReport = {
        tool: { name: TOOL_NAME, version: TOOL_VERSION },
        archive: options.archive,
        to,
        rendering,
        complete: true,
        notes: notExported ? [NO_RENDERINGS] : [],
        prototypes: [],
      };
      const counted = documentsProgress(catalog, ids, progress);
      for (const [n, id] of ids.entries()) {
        const archived = catalog.prototype(id);
        const result = archived?.hasRevision
          ? await convertPrototype(format, archived, options.out, rendering, options.signal, counted.page(n))
          : {
              ...emptyPrototypeReport(id, null, 0),
              skipped: [{ what: 'prototype', why: 'the manifest lists no files for its revision' }],
            };
        report.prototypes.push(result);
        report.complete &&= result.complete;
        options.onEvent?.({ type: 'prototype-converted', report: result });
        counted.finished(n);
      }
      await writeAtomically(join(options.out, REPORT_FILE), [`${JSON.stringify(report, null, 2)}\n`]);
      return report;
    } finally {
      await catalog.close();
    }
  } finally {
    archive.close();
  }
}

/**
 * A flag the format has no use for is refused, as --serialize is, rather than taken and ignored: a
 * package holds every entry of the archive, whatever --prototype or --no-rendering say, and only a
 * package is read back by --check.
 */
function refuseUnusedFlags(format: OutputFormat, options: ConvertOptions): void {
  const unused = isArchiveFormat(format)
    ? [options.prototypes !== undefined && '--prototype', options.rendering === false && '--no-rendering']
    : [options.check === true && '--check'];
  const flag = unused.find((name) => name !== false);
  if (flag === undefined) return;
  const why = isArchiveFormat(format)
    ? 'it packages every entry of the archive'
    : `only ${FORMATS.filter(isArchiveFormat)
        .map((other) => other.name)
        .join(' and ')} are read back`;
  throw new RabbitError('USAGE', `${flag} does not apply to --to ${format.name}: ${why}`);
}

/**
 * The documents' progress, in the archive's entries of the prototypes converted: a prototype weighs
 * what it holds (one of a thousand pages is not one of three), shared out over its pages as they go by.
 */
function documentsProgress(
  catalog: ArchiveCatalog,
  ids: readonly string[],
  report: ((progress: WorkProgress<ConvertStep>) => void) | undefined,
): { page(n: number): (pages: number, planned: number) => void; finished(n: number): void } {
  const weights = ids.map((id) => catalog.prototype(id)?.entries ?? 0);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let done = 0;
  report?.({ step: 'documents', done, total });
  return {
    page: (n) => (pages, planned) =>
      report?.({
        step: 'documents',
        done: done + Math.floor(((weights[n] ?? 0) * pages) / Math.max(pages, planned)),
        total,
      }),
    finished(n) {
      done += weights[n] ?? 0;
      report?.({ step: 'documents', done, total });
    },
  };
}

/** Said once, for the archive: it holds no renderings because none were asked for. */
const NO_RENDERINGS =
  'the archive holds no page renderings: it was exported without them (export --formats without png), so the pages are converted without them, as with --no-rendering';

function selectPrototypes(all: string[], wanted: readonly string[] | undefined, archive: string): string[] {
  if (wanted === undefined || wanted.length === 0) return all;
  refuseUnheld(wanted, all, { name: 'the archive', archive });
  return all.filter((id) => wanted.includes(id));
}
