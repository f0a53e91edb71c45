import type { BodyReader } from '../storage/spool.js';
import { createHash } from 'node:crypto';
import type { StoredFile } from '../storage/stored-file.js';
import { ASSET_LIMITS, isCss } from '../crawl/requisites/asset-types.js';
import { isPageHtml, localPathOf, type AssetCatalog } from '../crawl/requisites/collect-assets.js';
import { scanCss } from '../crawl/requisites/css-refs.js';
import { resolveReference, serviceUrl, type ServiceLocation } from '../crawl/requisites/resolve-ref.js';
import { applyReplacements, relativeEntryUrl, type Replacement } from '../crawl/requisites/rewrite.js';
import { inOrder } from '../core/in-order.js';
import { parse } from 'parse5';
import { decodePage } from './decode-page.js';
import { sanitizeTree, serializeSettled, withViewHead } from './sanitize-html.js';
import { rewriteTreeReferences, type RewriteReference } from './tree-references.js';
import { VIEW_CSP } from './view-policy.js';
import { viewPathOf } from './view-path.js';

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
 * What a reference to another host becomes in a viewable copy: an empty resource, so opening the
 * archive never contacts a third party. The raw file keeps the URL and the manifest lists it.
 */
const INERT = 'data:,';

export { viewPathOf };

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
    const base = serviceUrl(service, page.source);
    const rewrite: RewriteReference = (value, kind) => {
      const resolution = resolveReference(value, base, service);
      if (resolution.kind === 'foreign') return kind === 'link' ? undefined : INERT;
      if (resolution.kind !== 'service') return undefined;
      const target =
        kind === 'link'
          ? viewBySource.get(resolution.source)
          : (cssViews.get(resolution.request) ?? localPathOf(catalog, resolution));
      return target === undefined ? undefined : relativeEntryUrl(path, target);
    };
    yield {
      path,
      data: Buffer.from(pageView(decodePage(body, page.contentType), rewrite), 'utf8'),
      contentType: 'text/html; charset=utf-8',
      generatedFrom: page.path,
    };
  }
}

/**
 * One page's view: the parser's tree of the rendering, cleaned of everything that could act
 * (sanitize-html.ts), its references rewritten, the policy first in its head. Starts with a byte
 * order mark, which outranks anything in the file when a browser picks the encoding.
 */
export function pageView(html: string, rewrite: RewriteReference): string {
  const document = parse(html);
  sanitizeTree(document);
  rewriteTreeReferences(document, rewrite);
  withViewHead(document, VIEW_CSP);
  return `\ufeff${serializeSettled(document, VIEW_CSP)}`;
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
