import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RabbitError } from '../core/errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { openArchive } from '../archive/open-archive.js';
import { diagramXml, mxfileOpen, MXFILE_CLOSE } from './drawio-xml.js';
import {
  PrototypeReader,
  pngSize,
  type DiscussionData,
  type ElementData,
  type LayerData,
  type PageMeta,
} from './prototype-data.js';
import { addCounts, emptyPrototypeReport, REPORT_FILE, type ConvertReport, type PrototypeReport } from './report.js';
import { slugOf, XmlText } from './xml-text.js';

export interface ConvertOptions {
  /** The archive to read; it is opened read-only and never changed. */
  archive: string;
  /** Folder for the .drawio files and convert-report.json; created when missing. */
  out: string;
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
        to: 'drawio',
        rendering,
        complete: true,
        prototypes: [],
      };
      for (const id of ids) {
        const archived = catalog.prototype(id);
        const result = archived?.hasRevision
          ? await convertPrototype(archived, options.out, rendering, options.signal)
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
  const report = emptyPrototypeReport(archived.id, archived.name, archived.revision);
  const reader = new PrototypeReader(archived);
  const text = new XmlText();
  if (!archived.complete)
    reader.skipped.push({
      what: 'prototype',
      why: 'the archive marks it incomplete: the export could not fetch all of it',
    });

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

async function discussionsByPage(
  reader: PrototypeReader,
  pageIds: ReadonlySet<string>,
): Promise<Map<string, DiscussionData[]>> {
  const byPage = new Map<string, DiscussionData[]>();
  for (const discussion of await reader.discussions()) {
    if (discussion.pageId === null || !pageIds.has(discussion.pageId)) {
      reader.skipped.push({
        what: `discussion ${discussion.id}`,
        why: `its page ${discussion.pageId ?? '(none)'} is not a page of this prototype`,
      });
      continue;
    }
    const list = byPage.get(discussion.pageId) ?? [];
    list.push(discussion);
    byPage.set(discussion.pageId, list);
  }
  return byPage;
}

/** The page's PNG for its size, and to embed when the rendering is wanted. */
async function pagePng(
  reader: PrototypeReader,
  pageId: string,
  rendering: boolean,
): Promise<{ size?: { width: number; height: number }; embed?: Buffer }> {
  const rest = `pages/${pageId}.png`;
  // Without the rendering a missing PNG loses nothing: the page is then sized to its elements.
  if (!rendering && !reader.has(rest)) return {};
  const png = await reader.bytes(rest, `the rendering of page ${pageId}`);
  if (png === undefined) return {};
  const size = pngSize(png);
  if (size === undefined) {
    reader.skipped.push({ what: `the rendering of page ${pageId}`, why: `${rest} is not a PNG image` });
    return {};
  }
  return rendering ? { size, embed: png } : { size };
}

/** Where the page has no usable rendering: big enough for everything on it. */
function extentOf(elements: readonly ElementData[]): { width: number; height: number } {
  let width = 100;
  let height = 100;
  for (const { box } of elements) {
    width = Math.max(width, Math.ceil(box.x + box.width));
    height = Math.max(height, Math.ceil(box.y + box.height));
  }
  return { width, height };
}

async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw new RabbitError('OUTPUT_UNWRITABLE', `cannot create the output folder ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Written next to its final name and renamed, so a reader never sees half a document. */
async function writeAtomically(path: string, chunks: AsyncIterable<string> | Iterable<string>): Promise<void> {
  const partial = `${path}.partial`;
  try {
    const handle = await open(partial, 'w');
    try {
      for await (const chunk of chunks) await handle.write(chunk);
    } finally {
      await handle.close();
    }
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    if (error instanceof RabbitError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new RabbitError(
      code === 'ENOSPC' ? 'DISK_FULL' : 'OUTPUT_UNWRITABLE',
      `cannot write ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
