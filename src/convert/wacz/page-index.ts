import type { ArchiveCatalog } from '../../archive/archive-catalog.js';
import { revisionEntryNameOf } from '../../api/reader-names.js';
import type { ManifestHead } from '../../manifest/manifest-stream.js';
import { pageContents, planPages, startPrototype } from '../page-walk.js';
import { fetchTimeOf, servedUrl } from './served-url.js';

/** The header line of `pages/pages.jsonl`: its text is searchable (ReplayWeb.page indexes `text`). */
export const PAGES_HEADER = { format: 'json-pages-1.0', id: 'pages', title: 'All pages', hasText: true };

export interface PageLine {
  id: string;
  url: string;
  ts: string;
  title: string;
  text: string;
}

/**
 * One line per wireframe page, prototype by prototype and page by page as convert reads them
 * (page-walk.ts): its title, the URL of its XHTML rendering, and its words, the page's name and
 * the labels of its elements and of the layers it shows. A page whose XHTML was not exported has
 * nothing to replay and gets no line: `missing` counts them. `onPrototype` hears how many
 * prototypes have been walked, of how many.
 */
export async function* pageLines(
  catalog: ArchiveCatalog,
  head: ManifestHead,
  signal: AbortSignal | undefined,
  missing: { pages: number },
  onPrototype?: (done: number, total: number) => void,
): AsyncGenerator<PageLine> {
  const ids = catalog.prototypeIds();
  for (const [n, id] of ids.entries()) {
    onPrototype?.(n, ids.length);
    const archived = catalog.prototype(id);
    if (archived === undefined || !archived.hasRevision || !/^\d+$/.test(id)) continue;
    const { reader } = startPrototype(archived);
    const plan = await planPages(reader);
    for await (const content of pageContents(reader, plan, false, signal)) {
      const page = content.page;
      // The reader's names, not the export's: a page id read from someone's archive need not have
      // the service's shape (an old pages.json's keys), and such a page has no XHTML to list.
      const xhtml = await archived.entry(revisionEntryNameOf('page-html', { page: page.id }));
      if (xhtml === undefined) {
        missing.pages++;
        continue;
      }
      const labels = [...content.layers.flatMap((layer) => layer.elements), ...content.elements]
        .map((element) => element.text?.trim() ?? '')
        .filter((text) => text !== '');
      yield {
        id: `${id}/${page.id}`,
        url: servedUrl(head.source.baseUrl, xhtml.source),
        ts: fetchTimeOf(xhtml, head).at,
        title: `${archived.name ?? `Prototype ${id}`}: ${page.name}`,
        text: [page.name, ...labels].join('\n'),
      };
    }
  }
}
