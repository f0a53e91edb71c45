import type { BodyReader } from '../storage/spool.js';
import { createHash } from 'node:crypto';
import type { StoredFile } from '../storage/stored-file.js';
import { ASSET_LIMITS, isCss } from './requisites/asset-types.js';
import { isPageHtml, localPathOf, type AssetCatalog } from './requisites/collect-assets.js';
import { resolveReference, serviceUrl, urlAsRead, type ServiceLocation } from './requisites/resolve-ref.js';
import { relativeEntryUrl } from './requisites/rewrite.js';
import { inOrder } from '../core/in-order.js';
import { cleanCss, INERT_URL } from './view-css.js';
import { schemeOf, staysInside } from './view-urls.js';
import type { RewriteReference } from './tree-references.js';
import type { BuiltView, ViewBuilder } from './view-pool.js';
import { DRAWN_DATA } from './view-policy.js';
import { viewPathOf } from './view-path.js';
import { generatedEntryOf } from '../api/generated-entries.js';

/**
 * Pages read ahead and handed to the view builder: as many bodies and parsed pages as are held at
 * once. The export reads packed bodies with blocking reads (Spool.readBlocking), so only those that
 * wait on the file system's thread pool overlap: a body in a file of its own.
 */
const READ_AHEAD = 8;

/** A file the viewer made; the export stores it like a downloaded one, marked as generated. */
export interface GeneratedFile {
  path: string;
  data: Buffer;
  contentType: string;
  generatedFrom: string;
}

export { viewPathOf };

/**
 * A path as a browser finds the file it names: percent-escapes decoded (Chromium opens
 * `page1.%68tml` as `page1.html` from file://). Dot segments are gone already (the URL parser
 * removes them, escaped ones too).
 */
function pathKey(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .join('/');
}

/** Schemes a link in a view keeps: the reader clicks them deliberately, and they open no file. */
const CLICKED_SCHEMES = new Set(['mailto', 'tel']);

/**
 * What every reference of one view becomes (see `RewriteReference`). Nothing is left as written:
 * a link goes to a sibling page's view, to the page itself (`#...`), to another host as an
 * absolute http(s) URL, or to a mail or phone address; a resource or stylesheet goes to the
 * archive (a stylesheet only to a copy `StylesheetViews` made safe), or is a drawn `data:` URL.
 * Everything else is inert: a raw rendering or archived SVG opened from file:// would run its
 * scripts, and a `//host` reference there is `file://host/...` (on Windows, an SMB share).
 */
export function viewRewrite(
  path: string,
  base: string,
  service: ServiceLocation,
  views: { pages: ReadonlyMap<string, string>; sheets: ReadonlyMap<string, string>; catalog: AssetCatalog },
): RewriteReference {
  return (value, kind) => {
    const resolution = resolveReference(value, base, service);
    if (resolution.kind === 'ignored') {
      const bare = value.trim();
      if (resolution.reason === 'fragment') return bare;
      if (resolution.reason === 'data') return kind === 'resource' && DRAWN_DATA.test(bare) ? bare : undefined;
      const scheme = schemeOf(value);
      if (resolution.reason === 'scheme' && kind === 'link' && scheme !== undefined && CLICKED_SCHEMES.has(scheme))
        return bare;
      return undefined;
    }
    if (resolution.kind === 'foreign') {
      const foreignHost = new URL(resolution.url).origin !== service.origin;
      return kind === 'link' && foreignHost ? resolution.url : undefined;
    }
    if (kind === 'link') {
      const view = views.pages.get(pathKey(resolution.source));
      if (view === undefined) return undefined;
      const hash = new URL(value.trim(), base).hash;
      return `${relativeEntryUrl(path, view)}${hash}`;
    }
    const target =
      kind === 'stylesheet' ? views.sheets.get(resolution.request) : localPathOf(views.catalog, resolution);
    return target === undefined ? undefined : relativeEntryUrl(path, target);
  };
}

/** How many views of identical bodies a prototype's build remembers, to write them again without building. */
const SAME_BODY_VIEWS = 64;

/**
 * Viewable copies: every page rendering with its references rewritten to the archived assets (and
 * its links to sibling pages to their viewable copies) and everything else made inert (see
 * `viewRewrite`). The raw files are untouched. Handed out one at a time, in the pages' order, for
 * the caller to store before the next is made: a prototype of thousands of pages is never held as
 * copies in memory. The pages are parsed, cleaned and checked by `builder` (a worker thread's work);
 * only their references are resolved here, where the catalog is.
 *
 * Pages with the same body (and type) in one prototype get the same view, built once: their
 * references resolve alike from the one folder they share, unless one resolves against the page's
 * own name (`resolvesAgainstName`), in which case each page gets its own.
 */
export async function* buildPageViews(
  files: readonly StoredFile[],
  catalog: AssetCatalog,
  cssViews: ReadonlyMap<string, string>,
  service: ServiceLocation,
  read: BodyReader,
  builder: ViewBuilder,
): AsyncGenerator<GeneratedFile & { fault?: BuiltView['fault'] }> {
  const pages = files.filter(isPageHtml);
  const viewBySource = new Map(pages.map((page) => [pathKey(page.source), viewPathOf(page.path)]));
  const same = new Map<string, BuiltView>();
  const build = async (page: StoredFile): Promise<BuiltView> => {
    const key = `${page.sha256} ${page.contentType ?? ''}`;
    const known = same.get(key);
    if (known) return known;
    const path = viewPathOf(page.path);
    const base = serviceUrl(service, page.source);
    const sibling = new URL('./%00', base).href;
    const rewrite = viewRewrite(path, base, service, {
      pages: viewBySource,
      sheets: cssViews,
      catalog,
    });
    let ownName = false;
    const built = await builder.build({
      body: await read(page),
      contentType: page.contentType,
      viewPath: path,
      resolve: (references) =>
        references.map(([kind, value]) => {
          ownName ||= resolvesAgainstName(value, base, sibling);
          return rewrite(value, kind);
        }),
    });
    if (!ownName && built.fault?.kind !== 'not-built') {
      same.set(key, built);
      if (same.size > SAME_BODY_VIEWS) same.delete(same.keys().next().value as string);
    }
    return built;
  };
  for await (const [page, view] of inOrder(pages, READ_AHEAD, build)) {
    yield {
      path: viewPathOf(page.path),
      data: view.bytes,
      contentType: 'text/html; charset=utf-8',
      generatedFrom: page.path,
      ...(view.fault ? { fault: view.fault } : {}),
    };
  }
}

/**
 * Whether a reference means something else on a page of another name in the same folder (`""`,
 * `?q`, `http:` on an http page...): resolved, as a browser resolves it, against the page's URL and
 * against a sibling's whose name no page has. Such a page's view is its own, never one made for an
 * identical body. A place in the page (`#x`) is written as it is, whatever the page.
 */
function resolvesAgainstName(value: string, base: string, sibling: string): boolean {
  const ref = urlAsRead(value);
  if (ref.startsWith('#')) return false;
  try {
    const here = new URL(ref, base);
    const there = new URL(ref, sibling);
    here.hash = '';
    there.hash = '';
    return here.href !== there.href;
  } catch {
    return false;
  }
}

/**
 * The stylesheets a view may load, and the copies made for that. A sheet holding any reference
 * (see view-css.ts) gets a copy with each rewritten to the archive or made inert; a sheet holding
 * none is safe as it is. Made a batch at a time, before the pages that use them: each `add` decides
 * the stylesheets the catalog has gained since the last, and returns the copies to store. A batch
 * must be taken while nothing is being fetched (PageRequisites.settled), so that what its
 * stylesheets name, imported stylesheets included, is in the catalog for good or never will be: a
 * copy made during the crawl is then the copy the end of the run would have made.
 */
export class StylesheetViews {
  /** Request of a stylesheet -> the path a view loads it from: its copy, or the raw sheet when that needs none. */
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
      const { css, reencoded } = stylesheetText(await read(file));
      // Named after the URL, not the bytes: the same sheet served at two URLs resolves differently.
      const path = generatedEntryOf('view-css', {
        sha256: createHash('sha256').update(`view:${request}`).digest('hex'),
      });
      sheets.push({ request, file, css, reencoded, path });
    }
    // Which sheets need a copy is decided before any is written, so an import (cycles included)
    // points at the copy of the sheet it names, or at a sheet that needs none.
    const copies = sheets.filter((sheet) => sheet.reencoded || cleanCss(sheet.css, () => undefined).references > 0);
    for (const sheet of sheets) views.set(sheet.request, sheet.file.path);
    for (const sheet of copies) views.set(sheet.request, sheet.path);
    return copies.map((sheet) => {
      const rewrite = viewRewrite(sheet.path, serviceUrl(service, sheet.request), service, {
        pages: new Map(),
        sheets: views,
        catalog,
      });
      const produced = new Set<string>();
      const text = cleanCss(sheet.css, (value, kind) => {
        const result = rewrite(value, kind);
        if (result !== undefined) produced.add(result);
        return result;
      }).text;
      return {
        path: sheet.path,
        // A byte order mark first: it outranks any @charset the sheet still holds, and the copy is UTF-8.
        data: Buffer.concat([UTF8_BOM, Buffer.from(checkedCss(sheet.path, text, produced), 'latin1')]),
        contentType: 'text/css; charset=utf-8',
        generatedFrom: sheet.file.path,
      };
    });
  }
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A stylesheet as a browser decodes it (CSS Syntax, "determine the fallback encoding"): a byte order
 * mark, else an `@charset` rule at its very start, else UTF-8 (a view is UTF-8, and the sheet's
 * referrer with it). The text comes back as the latin1 view of its UTF-8 bytes that the CSS reader
 * takes; `reencoded` when the bytes were not UTF-8 already, so the sheet needs a copy in UTF-8
 * whatever it names (read as latin1, a UTF-16 or ISO-2022-JP sheet hides its `url(` from us).
 */
export function stylesheetText(bytes: Buffer): { css: string; reencoded: boolean } {
  const label = bomEncoding(bytes) ?? charsetRule(bytes) ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // A sheet may not declare itself UTF-16 by @charset (the rule would be unreadable in it): UTF-8.
  if (bomEncoding(bytes) === undefined && decoder.encoding.startsWith('utf-16')) decoder = new TextDecoder('utf-8');
  if (decoder.encoding === 'utf-8') return { css: stripBom(bytes).toString('latin1'), reencoded: false };
  const text = decoder.decode(bytes);
  return { css: Buffer.from(text, 'utf8').toString('latin1'), reencoded: true };
}

function bomEncoding(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function stripBom(bytes: Buffer): Buffer {
  return bomEncoding(bytes) === 'utf-8' ? bytes.subarray(3) : bytes;
}

/** The label of an `@charset "...";` the sheet starts with, exactly as CSS Syntax reads it. */
function charsetRule(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 1024).toString('latin1');
  return /^@charset "([^"]{1,64})";/.exec(head)?.[1];
}

/**
 * A stylesheet copy's final text, read again the way the rewriting read its source: every reference
 * in it must be one the rewriting wrote (or the inert one) and stay inside the archive. A copy that
 * fails is written empty: a view then draws without it, and loads nothing it should not.
 */
function checkedCss(path: string, css: string, produced: ReadonlySet<string>): string {
  let holds = true;
  cleanCss(css, (value, kind) => {
    if (value !== INERT_URL && !(produced.has(value) && staysInside(value, kind, path))) holds = false;
    return value;
  });
  return holds ? css : NOT_KEPT_CSS;
}

const NOT_KEPT_CSS = '/* This stylesheet could not be kept safe to load offline; its raw copy is in the archive. */\n';
