import type { RabbitError } from '../core/errors.js';
import { bufferChunks } from '../core/read-chunks.js';
import type { FetchContext } from '../crawl/fetch-resource.js';
import { RedactedBody } from '../crawl/redacted-body.js';
import type { BodyReader } from '../storage/spool.js';
import type { Frontier } from '../crawl/frontier.js';
import type { ArchiveModel, ArchivedEntry } from '../manifest/archive-model.js';
import type { StoredFile } from '../storage/stored-file.js';
import { GENERATED_SOURCE, MANIFEST_PATH } from '../manifest/types.js';
import { cachedBodyOf, storedFileOf } from '../storage/stored-file.js';
import { PageRequisites, setArchived, VIEWER_READS, type AssetCatalog } from './requisites/collect-assets.js';
import type { AssetLimits } from './requisites/asset-types.js';
import type { ServiceLocation } from './requisites/resolve-ref.js';
import { indexEntryOf, summarizePrototype } from './archive-data.js';
import {
  INDEX_ERROR_LIMIT,
  INDEX_PATH,
  prototypeIndexPath,
  renderIndex,
  renderPrototypePage,
  type IndexEntry,
} from './index-html.js';
import { buildPageViews, StylesheetViews, type GeneratedFile } from './page-views.js';
import { INLINE_VIEW_BYTES, openViewBuilder, type ViewBuilder, type ViewBuilderOptions } from './view-pool.js';
import { SEARCH_BOX_PATH, searchBoxScript } from './search-box.js';
import { searchPart, searchParts, type GeneratedStream } from './search-part.js';
import { parseEntryPath } from '../api/entry-paths.js';

export interface OfflineViewerOptions {
  fetch: FetchContext;
  frontier: Frontier;
  model: ArchiveModel;
  service: ServiceLocation;
  /** The base URL as given, for the overview's heading. */
  baseUrl: string;
  /** False when page renderings were not exported: no assets and no viewable copies then. */
  pages: boolean;
  limits?: Partial<AssetLimits>;
  onFailed?(source: string, error: RabbitError): void;
  /** A page's view failed its final check (or could not be built) and its text stands in for it. */
  onViewReplaced?(path: string): void;
  /** Where page views are built (view-pool.ts); by default worker threads beside the crawl. */
  views?: (options: ViewBuilderOptions) => ViewBuilder;
}

/**
 * The offline viewer of an export: a viewable copy of every page and stylesheet that needs one, an
 * overview page and a part of the search index per prototype, and index.html at the root.
 * Everything made here is stored through the spool and listed in the manifest as generated, so
 * `verify` checks it like any other entry.
 *
 * It hears the crawl as it goes: page renderings as they are stored (their requisites are fetched
 * on the crawl's frontier) and prototypes as they are done. A done prototype is built at once when
 * its pages were scanned whole and no page asset is outstanding, beside the frontier's tasks (in no
 * slot of theirs): the work is done while responses are awaited, not after the crawl.
 * What that leaves (prototypes whose pages must be read again, those done while assets were
 * outstanding or after a halt) and index.html are made by `finish`. A prototype's copies are the
 * same either way; only when they are written differs.
 */
export class OfflineViewer {
  private readonly requisites: PageRequisites | undefined;
  private readonly sheets: StylesheetViews | undefined;
  /**
   * The files outside any prototype, read once: the only API resources among them (all a page may
   * point at through `archived`) are the prototype lists, stored before any prototype is crawled.
   */
  private top: Promise<ArchivedEntry[]> | undefined;
  /** The overview's line for each prototype built so far. */
  private readonly built = new Map<string, IndexEntry | undefined>();
  /** Done during the crawl and waiting to be built there. */
  private readonly ready: string[] = [];
  private building = false;
  private readonly read: BodyReader;
  private readonly locate: (entry: ArchivedEntry) => StoredFile;
  /** Started with the first page to build, ended by `close`. */
  private builder: ViewBuilder | undefined;

  constructor(private readonly options: OfflineViewerOptions) {
    const { fetch } = options;
    // Pages and summaries are read with blocking reads: a few small bodies at a time, from the
    // pack's memory or the page cache, at less CPU than a round trip through the thread pool.
    this.read = (ref) => fetch.spool.readBlocking(ref);
    this.locate = (entry) => ({ ...entry, ...fetch.spool.refOf(entry) });
    if (!options.pages) return;
    this.requisites = new PageRequisites({
      fetch,
      frontier: options.frontier,
      model: options.model,
      service: options.service,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.onFailed ? { onFailed: options.onFailed } : {}),
      onSettled: () => this.kick(),
    });
    this.sheets = new StylesheetViews(this.requisites.catalog, options.service);
  }

  /** The crawl stored a body (page renderings are scanned for their requisites). */
  stored(file: StoredFile, prototypeId: string): void {
    this.requisites?.pageStored(file, prototypeId);
  }

  /** The crawl has finished a prototype: build it now if everything it needs is decided. */
  prototypeDone(id: string): void {
    if (this.requisites && !this.requisites.scannedWhole(id)) return;
    this.ready.push(id);
    this.kick();
  }

  /**
   * After the crawl has drained: fetches the requisites of pages that had to be read again, builds
   * every prototype not built yet, then index.html. One prototype at a time.
   */
  async finish(): Promise<void> {
    const { model } = this.options;
    if (this.requisites) {
      await this.requisites.finish(this.locate);
      model.foreignReferences.push(...foreignList(this.requisites.catalog));
    }
    // No request is left that building on this thread could delay, and a thread started now would
    // only add its heap to the run's peak: what no thread was started for during the crawl (an
    // export --since copies most pages) is built here, but for a page large enough to need a
    // thread's capped heap. A pool the crawl started goes on serving.
    this.builder ??= this.openViews({ inlineUpTo: INLINE_VIEW_BYTES });
    for (const id of model.prototypeIds()) if (!this.built.has(id)) await this.build(id);
    // Stylesheets no page of a prototype built after them names still get their copies.
    await this.addSheets();
    await store(this.options, {
      path: SEARCH_BOX_PATH,
      data: Buffer.from(searchBoxScript(), 'utf8'),
      contentType: 'text/javascript; charset=utf-8',
      generatedFrom: MANIFEST_PATH,
    });
    // The search index is read from the stored bodies once the crawl is over, rather than beside it
    // as the pages are: made during the crawl (while responses are awaited) it took a twentieth off
    // the whole command at 20 ms latency, but added its reading to the crawl's own memory, 7 to 20
    // MiB more at a million resources, up to the 200 MiB the export is held to and past it. The parts
    // are written together, after everything else but the list of parts and index.html: `search`
    // finds them from the end of the zip's directory alone.
    const indexed: string[] = [];
    const { spool } = this.options.fetch;
    for (const id of model.prototypeIds()) {
      const state = model.prototype(id);
      if (state === undefined) continue;
      const entries = model.filedEntries(id);
      await storeStream(
        this.options,
        searchPart(state, entries, (entry) => spool.refOf(entry), this.read),
      );
      indexed.push(id);
    }
    await store(this.options, searchParts(indexed));
    const entries = model.prototypeIds().flatMap((id) => this.built.get(id) ?? []);
    const errors = await model.firstErrors(INDEX_ERROR_LIMIT);
    const index = renderIndex({
      baseUrl: this.options.baseUrl,
      prototypes: entries,
      errors,
      errorCount: model.errorCount,
      search: true,
    });
    await store(this.options, {
      path: INDEX_PATH,
      data: Buffer.from(index, 'utf8'),
      contentType: 'text/html; charset=utf-8',
      generatedFrom: MANIFEST_PATH,
    });
  }

  /** Ends the threads that build page views, whether the export finished or not. */
  async close(): Promise<void> {
    await this.builder?.close();
    this.builder = undefined;
  }

  /**
   * Starts building the prototypes that are ready, unless a build is under way or an asset is
   * outstanding (it calls again when the last one ends). A frontier that is halted or stopped
   * refuses the work, and `finish` builds what is left.
   */
  private kick(): void {
    if (this.building || this.ready.length === 0 || this.requisites?.settled === false) return;
    this.building = true;
    this.options.frontier.beside(async () => {
      // Settled is checked again before each: the build takes its stylesheets as they are then.
      while (this.ready.length > 0 && this.requisites?.settled !== false)
        await this.build(this.ready.shift() as string);
      this.building = false;
      this.kick();
    });
  }

  private openViews(options: ViewBuilderOptions): ViewBuilder {
    return (this.options.views ?? openViewBuilder)(options);
  }

  private async addSheets(): Promise<void> {
    if (this.sheets) for (const sheet of await this.sheets.add(this.read)) await store(this.options, sheet);
  }

  /** A prototype's page copies (after the stylesheet copies not made yet) and its overview page. */
  private async build(id: string): Promise<void> {
    const { model } = this.options;
    await this.addSheets();
    const files = (await model.files(id, VIEWER_READS)).map(this.locate);
    if (this.requisites && this.sheets) {
      // The archived files of this prototype in a catalog of its own: the crawl may be using the
      // shared one at the same time.
      const { assets, foreign } = this.requisites.catalog;
      const catalog: AssetCatalog = { assets, foreign, archived: new Map() };
      setArchived(catalog, await (this.top ??= model.files(undefined)), files);
      this.builder ??= this.openViews({});
      const views = buildPageViews(files, catalog, this.sheets.views, this.options.service, this.read, this.builder);
      for await (const { fault, ...view } of views) {
        if (fault) this.options.onViewReplaced?.(view.path);
        files.push(await store(this.options, view));
      }
    }
    const summary = await summarizePrototype(id, files, model.prototype(id)?.complete ?? false, this.read);
    if (summary) {
      const page = renderPrototypePage(summary, this.options.baseUrl, true);
      await store(this.options, {
        path: prototypeIndexPath(id),
        data: Buffer.from(page, 'utf8'),
        contentType: 'text/html; charset=utf-8',
        generatedFrom: MANIFEST_PATH,
      });
    }
    this.built.set(id, summary && indexEntryOf(summary));
  }
}

function store(options: OfflineViewerOptions, generated: GeneratedFile): Promise<StoredFile> {
  const { data, ...rest } = generated;
  return storeStream(options, { ...rest, chunks: bufferChunks(data) });
}

async function storeStream(options: OfflineViewerOptions, generated: GeneratedStream): Promise<StoredFile> {
  const { secrets } = options.fetch;
  // What the viewer writes is made from decoded text: a key the raw bytes held only in pieces
  // (split by a comment the cleaning drops, or by an encoding's escapes) can be whole in it.
  const chunks = secrets ? new RedactedBody(generated.chunks, secrets, { source: generated.path }) : generated.chunks;
  const body = await options.fetch.spool.write(chunks, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    source: generated.path,
  });
  const file = storedFileOf(
    { path: generated.path, source: GENERATED_SOURCE, generatedFrom: generated.generatedFrom },
    cachedBodyOf(body, { contentType: generated.contentType, lastModified: null }),
  );
  const owner = parseEntryPath(generated.path)?.prototype;
  options.model.addFile(owner !== undefined && options.model.hasPrototype(owner) ? owner : undefined, file);
  // Copies of a prototype's pages are made back to back: let the pack's writes keep up with them.
  await options.fetch.spool.settle();
  return file;
}

function foreignList(catalog: AssetCatalog): { url: string; referencedBy: string[] }[] {
  return [...catalog.foreign]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([url, referrers]) => ({ url, referencedBy: [...referrers].sort() }));
}
