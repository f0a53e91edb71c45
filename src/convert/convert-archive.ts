import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { openArchive } from '../archive/open-archive.js';
import { diagramXml, mxfileOpen, MXFILE_CLOSE } from './drawio-xml.js';
import { convertPrototypePages, type PageFormat } from './convert-pages.js';
import { discussionsByPage, extentOf, pagePng, startPrototype } from './page-walk.js';
import type { LayerData, PageMeta } from './prototype-data.js';
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
 * Writes one draw.io document per prototype, one prototype at a time and one page at a time into
 * it, so memory follows the biggest page rather than the archive.
 */
export async function convertArchive(options: ConvertOptions): Promise<ConvertReport> {
  const rendering = options.rendering ?? true;
  const to = options.to ?? 'drawio';
  const archive = await openArchive(options.archive);
  try {
    // The manifest streams by once into a catalog on disk: one prototype's entries are found there
    // as they are asked for, so memory follows neither the account nor the biggest prototype.
    const catalog = await archive.catalog();
    try {
      const ids = selectPrototypes(catalog.prototypeIds(), options.prototypes);
      await makeFolder(options.out);
      const report: ConvertReport = {
        tool: { name: TOOL_NAME, version: TOOL_VERSION },
        archive: options.archive,
        to,
        rendering,
        complete: true,
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

  const pages: PageMeta[] = [];
  for (const pageId of await reader.pageIds()) pages.push(await reader.pageMeta(pageId));
  const pageIds = new Set(pages.map((page) => page.id));
  const discussions = await discussionsByPage(reader, pageIds);
  const layers = new Map<string, LayerData>();
  const layerOf = async (layerId: string): Promise<LayerData> => {
    let layer = layers.get(layerId);
    if (layer === undefined) layers.set(layerId, (layer = await reader.layer(layerId)));
    return layer;
  };

  if (!/^\d+$/.test(archived.id)) {
    reader.skipped.push({ what: 'prototype', why: `its id ${JSON.stringify(archived.id)} cannot name a file` });
  } else if (pages.length === 0) {
    reader.notes.push({ what: 'prototype', why: 'it has no pages, so there is nothing to draw' });
  } else {
    const file = `${archived.id}-${slugOf(archived.name ?? '')}.drawio`;
    const chunks = (async function* (): AsyncGenerator<string> {
      yield mxfileOpen(TOOL_VERSION);
      for (const page of pages) {
        if (signal?.aborted) throw new RabbitError('INTERRUPTED', 'the conversion was interrupted');
        const shown: LayerData[] = [];
        for (const layerId of page.layerIds) shown.push(await layerOf(layerId));
        const elements = await reader.elements(`pages/${page.id}`, `page ${page.id}`);
        const png = await pagePng(reader, page.id, rendering);
        const pageDiscussions = discussions.get(page.id) ?? [];
        const { xml, stats } = diagramXml(
          {
            page,
            size: png.size ?? extentOf([...shown.flatMap((layer) => layer.elements), ...elements]),
            png: png.embed,
            layers: shown,
            elements,
            discussions: pageDiscussions,
            pageIds,
          },
          text,
        );
        report.pages++;
        report.shapes += stats.shapes;
        report.links += stats.links;
        report.layers += shown.length + 1;
        report.discussions += pageDiscussions.length;
        addCounts(report.genericTypes, stats.generic);
        for (const dangling of stats.danglingTargets) {
          reader.notes.push({
            what: `element ${dangling.elementId} on page ${page.id}`,
            why: `its target ${dangling.target} is not a page of this prototype; it has no link`,
          });
        }
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
