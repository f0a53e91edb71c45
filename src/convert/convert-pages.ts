import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import {
  NO_PAGES,
  noteDangling,
  pageContents,
  planPages,
  prototypeHead,
  startPrototype,
  type PageContent,
} from './page-walk.js';
import { pdfBinderChunks } from './pdf-binder.js';
import type { PrototypeReport } from './report.js';
import { svgFileOf, svgPage } from './svg-pages.js';
import { makeFolder, writeAtomically } from './write-output.js';
import { slugOf } from './xml-text.js';

/** The outputs convert writes besides draw.io: a PDF binder per prototype, or a folder of SVG pages. */
export type PageFormat = 'pdf' | 'svg';

/**
 * One prototype into `out`: `{id}-{slug}.pdf`, or the folder `{id}-{slug}/` of one SVG per page.
 * Missing or damaged parts are recorded as skipped, exactly as for draw.io.
 */
export async function convertPrototypePages(
  to: PageFormat,
  archived: ArchivedPrototype,
  out: string,
  rendering: boolean,
  signal: AbortSignal | undefined,
): Promise<PrototypeReport> {
  const { report, reader, text } = startPrototype(archived);
  const plan = await planPages(reader);
  const counted = (pages: AsyncIterable<PageContent>): AsyncGenerator<PageContent> =>
    (async function* () {
      for await (const content of pages) {
        report.pages++;
        report.layers += content.layers.length + 1;
        yield content;
      }
    })();

  if (!/^\d+$/.test(archived.id)) {
    reader.skipped.push({ what: 'prototype', why: `its id ${JSON.stringify(archived.id)} cannot name a file` });
  } else if (to === 'pdf') {
    const head = await prototypeHead(reader);
    const file = `${archived.id}-${slugOf(archived.name ?? '')}.pdf`;
    const pages = counted(pageContents(reader, plan, rendering, signal));
    const { chunks, stats } = pdfBinderChunks(head, plan, pages, text);
    await writeAtomically(join(out, file), chunks);
    report.file = file;
    report.replacedCharacters = stats.replacedCharacters;
    report.binder = {
      bytes: await fileSize(join(out, file)),
      renderingBytes: stats.renderingBytes,
      fonts: stats.fonts,
    };
    report.shapes += stats.labels;
    report.links += stats.links;
    report.discussions += stats.discussions;
    for (const dangling of stats.danglingTargets) noteDangling(reader, dangling.pageId, dangling);
  } else if (plan.pages.length === 0) {
    reader.notes.push({ what: 'prototype', why: NO_PAGES });
  } else {
    const folder = `${archived.id}-${slugOf(archived.name ?? '')}`;
    await makeFolder(join(out, folder));
    const fileOfPage = new Map(plan.pages.map((page, index) => [page.id, svgFileOf(index + 1, page.id)]));
    for await (const content of counted(pageContents(reader, plan, rendering, signal))) {
      const { xml, stats } = svgPage(content, fileOfPage, text);
      await writeAtomically(join(out, folder, fileOfPage.get(content.page.id) as string), [xml]);
      report.shapes += stats.shapes;
      report.links += stats.links;
      report.discussions += content.discussions.length;
      for (const dangling of stats.danglingTargets) noteDangling(reader, content.page.id, dangling);
    }
    report.file = folder;
  }
  report.droppedCharacters = text.dropped;
  report.skipped = reader.skipped;
  report.notes = reader.notes;
  report.complete = reader.skipped.length === 0;
  return report;
}

async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
}
