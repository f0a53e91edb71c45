import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { openArchive } from '../archive/open-archive.js';
import { diagramXml, mxfileOpen, MXFILE_CLOSE } from './drawio-xml.js';
import { convertPrototypePages, type PageFormat } from './convert-pages.js';
import { NO_PAGES, noteDangling, pageContents, planPages, startPrototype } from './page-walk.js';
import { addCounts, emptyPrototypeReport, REPORT_FILE, type ConvertReport, type PrototypeReport } from './report.js';
import { makeFolder, writeAtomically } from './write-output.js';
import { slugOf } from './xml-text.js';

export interface ConvertOptions {
  /** The archive to read; it is opened read-only and never changed. */
  archive: string;
  /** Folder for the documents and convert-report.json; created when missing. */
  out: string;
  /** What to write: draw.io documents (the default), PDF binders or folders of SVG pages. */
  to?: 'drawio' | PageFormat;
  /** Only these prototype ids (default: every prototype in the archive). */
  prototypes?: readonly string[];
  /** Embed each page's PNG on a locked Rendering layer (default true). */
  rendering?: boolean;
  onEvent?: (event: ConvertEvent) => void;
  /** Stops between pages; the document being written is removed, finished ones stay. */
  signal?: AbortSignal;
}

export type ConvertEvent = { type: 'prototype-converted'; report: PrototypeReport };

/**
 * Writes one document (or folder of SVG pages) per prototype, one prototype at a time and one page
 * at a time into it, so memory follows the biggest page rather than the archive.
 */
export async function convertArchive(options: ConvertOptions): Promise<ConvertReport> {
  const to = options.to ?? 'drawio';
  const archive = await openArchive(options.archive);
  try {
    const seen = { pages: false, renderings: false };
    // The manifest streams by once into a catalog on disk: one prototype's entries are found there
    // as they are asked for, so memory follows neither the account nor the biggest prototype.
    const catalog = await archive.catalog({
      visitor: {
        file(entry, owner) {
          if (owner === null) return;
          if (PAGE_JSON.test(entry.path)) seen.pages = true;
          else if (PAGE_PNG.test(entry.path)) seen.renderings = true;
        },
        // A rendering the export asked for and could not fetch is missing; one never asked for is not.
        error(error) {
          if (PAGE_PNG.test(error.source)) seen.renderings = true;
        },
      },
    });
    try {
      // The manifest does not record the export's --formats: pages without a single rendering
      // listed or failed are an export without PNG, which loses nothing here.
      const asked = options.rendering ?? true;
      const notExported = asked && seen.pages && !seen.renderings;
      const rendering = asked && !notExported;
      const ids = selectPrototypes(catalog.prototypeIds(), options.prototypes);
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
      for (const id of ids) {
        const archived = catalog.prototype(id);
        const result = archived?.hasRevision
          ? to === 'drawio'
            ? await convertPrototype(archived, options.out, rendering, options.signal)
            : await convertPrototypePages(to, archived, options.out, rendering, options.signal)
          : {
              ...emptyPrototypeReport(id, null, 0),
              skipped: [{ what: 'prototype', why: 'the manifest lists no files for its revision' }],
            };
        report.prototypes.push(result);
        report.complete &&= result.complete;
        options.onEvent?.({ type: 'prototype-converted', report: result });
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

const PAGE_JSON = /\/pages\/[A-Za-z0-9]+\.json$/;
const PAGE_PNG = /\/pages\/[A-Za-z0-9]+\.png$/;
/** Said once, for the archive: it holds no renderings because none were asked for. */
const NO_RENDERINGS =
  'the archive holds no page renderings: it was exported without them (export --formats without png), so the pages are converted without them, as with --no-rendering';

function selectPrototypes(all: string[], wanted: readonly string[] | undefined): string[] {
  if (wanted === undefined || wanted.length === 0) return all;
  const missing = wanted.filter((id) => !all.includes(id));
  if (missing.length > 0) {
    throw new RabbitError(
      'USAGE',
      `the archive holds no prototype ${missing.join(', ')} (it holds ${all.join(', ') || 'none'})`,
    );
  }
  return all.filter((id) => wanted.includes(id));
}

async function convertPrototype(
  archived: ArchivedPrototype,
  out: string,
  rendering: boolean,
  signal: AbortSignal | undefined,
): Promise<PrototypeReport> {
  const { report, reader, text } = startPrototype(archived);
  const plan = await planPages(reader);

  if (!/^\d+$/.test(archived.id)) {
    reader.skipped.push({ what: 'prototype', why: `its id ${JSON.stringify(archived.id)} cannot name a file` });
  } else if (plan.pages.length === 0) {
    reader.notes.push({ what: 'prototype', why: NO_PAGES });
  } else {
    const file = `${archived.id}-${slugOf(archived.name ?? '')}.drawio`;
    const chunks = (async function* (): AsyncGenerator<string> {
      yield mxfileOpen(TOOL_VERSION);
      for await (const content of pageContents(reader, plan, rendering, signal)) {
        const { xml, stats } = diagramXml({ ...content, pageIds: plan.pageIds }, text);
        report.pages++;
        report.shapes += stats.shapes;
        report.links += stats.links;
        report.layers += content.layers.length + 1;
        report.discussions += content.discussions.length;
        addCounts(report.genericTypes, stats.generic);
        for (const dangling of stats.danglingTargets) noteDangling(reader, content.page.id, dangling);
        yield xml;
      }
      yield MXFILE_CLOSE;
    })();
    await writeAtomically(join(out, file), chunks);
    report.file = file;
  }
  report.droppedCharacters = text.dropped;
  report.skipped = reader.skipped;
  report.notes = reader.notes;
  report.complete = reader.skipped.length === 0;
  return report;
}
