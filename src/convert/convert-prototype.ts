import type { ArchivedPrototype } from '../archive/archive-catalog.js';
import { documentStem } from './file-name.js';
import type { DocumentFormat } from './formats/document-format.js';
import { NO_PAGES, noteDangling, pageContents, planPages, startPrototype, type PageContent } from './page-walk.js';
import type { PrototypeReport } from './report.js';

/**
 * One prototype into `out` in the given format. Missing or damaged parts are recorded as skipped,
 * the same way for every format; the format writes only its own document. `onPage` hears each
 * page as it is handed to the format, with how many the prototype lists.
 */
export async function convertPrototype(
  format: DocumentFormat,
  archived: ArchivedPrototype,
  out: string,
  rendering: boolean,
  signal: AbortSignal | undefined,
  onPage?: (pages: number, planned: number) => void,
): Promise<PrototypeReport> {
  const { report, reader, text } = startPrototype(archived);
  const plan = await planPages(reader);
  const counted = (pages: AsyncIterable<PageContent>): AsyncGenerator<PageContent> =>
    (async function* () {
      for await (const content of pages) {
        report.pages++;
        report.layers += content.layers.length + 1;
        yield content;
        onPage?.(report.pages, plan.pages.length);
      }
    })();

  if (!/^\d+$/.test(archived.id)) {
    reader.skipped.push({ what: 'prototype', why: `its id ${JSON.stringify(archived.id)} cannot name a file` });
  } else if (plan.pages.length === 0 && !format.withoutPages) {
    reader.notes.push({ what: 'prototype', why: NO_PAGES });
  } else {
    report.file = await format.write({
      reader,
      plan,
      pages: counted(pageContents(reader, plan, rendering, signal)),
      text,
      report,
      out,
      stem: documentStem(archived.id, archived.name),
      dangling: (pageId, dangling) => noteDangling(reader, pageId, dangling),
    });
  }
  report.droppedCharacters = text.dropped;
  report.skipped = reader.skipped;
  report.notes = reader.notes;
  report.complete = reader.skipped.length === 0;
  return report;
}
