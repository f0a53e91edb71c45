import type { BodyReader } from '../storage/spool.js';
import { createHash } from 'node:crypto';
import type { StoredFile } from '../storage/stored-file.js';
import { ASSET_LIMITS, isCss } from '../crawl/requisites/asset-types.js';
import { isPageHtml, localPathOf, type AssetCatalog } from '../crawl/requisites/collect-assets.js';
import { scanCss } from '../crawl/requisites/css-refs.js';
import { scanHtml } from '../crawl/requisites/html-refs.js';
import { resolveReference, serviceUrl, type ServiceLocation } from '../crawl/requisites/resolve-ref.js';
import { applyReplacements, relativeEntryUrl, type Replacement } from '../crawl/requisites/rewrite.js';
import { inOrder } from '../core/in-order.js';

/**
 * Page renderings read ahead. The export reads packed bodies with blocking reads (Spool.readBlocking),
 * so only those that wait on the file system's thread pool overlap: a body in a file of its own.
 */
const READ_AHEAD = 8;

/** A file the viewer made; the export stores it like a downloaded one, marked as generated. */
export interface GeneratedFile {
  path: string;
  data: Buffer;
  contentType: string;
  generatedFrom: string;
}

/**
 * Keeps a viewable copy offline and private: nothing outside the archive may load, so a foreign
 * reference left as written stays inert, and no script (the service's or anyone's) runs.
 */
export const VIEW_CSP =
  "default-src 'none'; img-src 'self' file: data:; style-src 'self' file: data: 'unsafe-inline'; font-src 'self' file: data:; media-src 'self' file: data:";

/**
 * What a reference to another host becomes in a viewable copy: an empty resource, so opening the
 * archive never contacts a third party. The raw file keeps the URL and the manifest lists it.
 */
const INERT = 'data:,';

const CSP_META = `<meta http-equiv="Content-Security-Policy" content="${VIEW_CSP}" />`;

/** `prototypes/3/r6/pages/page1.html` -> `prototypes/3/r6/pages/page1.view.html` */
export function viewPathOf(pagePath: string): string {
  return pagePath.replace(/\.html$/, '.view.html');
}

/**
 * Viewable copies: every page rendering with its references rewritten to the archived assets (and
 * its links to sibling pages to their viewable copies), and every stylesheet whose references need
 * the same. References to other hosts become inert; references to the service host the archive
 * cannot satisfy are left as written (and the policy keeps them from loading). The raw files are
 * untouched. Handed out one at a time, for the caller to store before the next is made: a
 * prototype of thousands of pages is never held as copies in memory.
 */
export async function* buildPageViews(
  files: readonly StoredFile[],
  catalog: AssetCatalog,
  cssViews: ReadonlyMap<string, string>,
  service: ServiceLocation,
  read: BodyReader,
): AsyncGenerator<GeneratedFile> {
  const pages = files.filter(isPageHtml);
  const viewBySource = new Map(pages.map((page) => [page.source, viewPathOf(page.path)]));
  for await (const [page, body] of inOrder(pages, READ_AHEAD, read)) {
    const path = viewPathOf(page.path);
    const html = body.toString('latin1');
    const base = serviceUrl(service, page.source);
    const replacements: Replacement[] = [];
    for (const ref of scanHtml(html)) {
      const resolution = resolveReference(ref.value, base, service);
      if (resolution.kind === 'foreign' && ref.kind !== 'link')
        replacements.push({ start: ref.start, end: ref.end, text: INERT });
      if (resolution.kind !== 'service') continue;
      const target =
        ref.kind === 'link'
          ? viewBySource.get(resolution.source)
          : (cssViews.get(resolution.request) ?? localPathOf(catalog, resolution));
      if (target !== undefined)
        replacements.push({ start: ref.start, end: ref.end, text: relativeEntryUrl(path, target) });
    }
    yield {
      path,
      data: Buffer.from(withPolicy(applyReplacements(html, replacements)), 'latin1'),
      contentType: 'text/html; charset=utf-8',
      generatedFrom: page.path,
    };
  }
}

/**
 * Viewable copies of the stylesheets that need one, and for each its request -> path of the copy.
 * Made a batch at a time, before the pages that use them: each `add` decides the stylesheets the
 * catalog has gained since the last, and returns the copies to store. A batch must be taken while
 * nothing is being fetched (PageRequisites.settled), so that what its stylesheets name, imported
 * stylesheets included, is in the catalog for good or never will be: a copy made during the crawl
 * is then the copy the end of the run would have made.
 */
export class StylesheetViews {
  /** Request of a stylesheet -> path of its viewable copy, for those that have one. */
  readonly views = new Map<string, string>();
  private readonly decided = new Set<string>();

  constructor(
    private readonly catalog: AssetCatalog,
    private readonly service: ServiceLocation,
  ) {}

  async add(read: BodyReader): Promise<GeneratedFile[]> {
    const { catalog, service, views } = this;
    // Taken before the first await: the batch is what the catalog held when it was settled.
    const fresh = [...catalog.assets]
      .filter(
        ([request, file]) =>
          !this.decided.has(request) && isCss(file.contentType) && file.size <= ASSET_LIMITS.maxCssBytes,
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [request] of fresh) this.decided.add(request);
    const sheets = [];
    for (const [request, file] of fresh) {
      const css = (await read(file)).toString('latin1');
      const base = serviceUrl(service, request);
      const refs = scanCss(css).map((ref) => {
        const resolution = resolveReference(ref.value, base, service);
        return { ref, resolution, target: resolution.kind === 'foreign' ? INERT : localPathOf(catalog, resolution) };
      });
      // Named after the URL, not the bytes: the same sheet served at two URLs resolves differently.
      const path = `assets/${createHash('sha256').update(`view:${request}`).digest('hex')}.view.css`;
      sheets.push({ request, file, css, path, refs });
    }
    // A sheet needs a copy when any of its references leads into the archive or to another host;
    // imports then point at the imported sheet's copy when it has one, else at the sheet itself
    // (whose references need nothing). Deciding first keeps import cycles harmless.
    for (const sheet of sheets)
      if (sheet.refs.some((t) => t.target !== undefined)) views.set(sheet.request, sheet.path);
    const out: GeneratedFile[] = [];
    for (const sheet of sheets) {
      if (!views.has(sheet.request)) continue;
      const replacements: Replacement[] = [];
      for (const { ref, resolution, target } of sheet.refs) {
        if (target === undefined) continue;
        if (target === INERT) {
          replacements.push({ start: ref.start, end: ref.end, text: INERT });
          continue;
        }
        const view = resolution.kind === 'service' ? views.get(resolution.request) : undefined;
        replacements.push({ start: ref.start, end: ref.end, text: relativeEntryUrl(sheet.path, view ?? target) });
      }
      out.push({
        path: sheet.path,
        data: Buffer.from(applyReplacements(sheet.css, replacements), 'latin1'),
        contentType: 'text/css; charset=utf-8',
        generatedFrom: sheet.file.path,
      });
    }
    return out;
  }
}

/** The policy goes first thing in the head, before anything it must govern. */
function withPolicy(html: string): string {
  const head = /<head(?:[\t\n\f\r ][^>]*)?>/i.exec(html);
  if (head)
    return `${html.slice(0, head.index + head[0].length)}\n${CSP_META}${html.slice(head.index + head[0].length)}`;
  const root = /<html(?:[\t\n\f\r ][^>]*)?>/i.exec(html);
  const at = root ? root.index + root[0].length : 0;
  return `${html.slice(0, at)}<head>${CSP_META}</head>${html.slice(at)}`;
}
