import { Readable } from 'node:stream';
import type { RabbitError } from '../core/errors.js';
import type { FetchContext } from '../client/fetch-resource.js';
import type { BodyRef } from '../storage/spool.js';
import type { Frontier } from '../crawl/frontier.js';
import type { ArchiveModel, ArchivedEntry, StoredFile } from '../manifest/archive-model.js';
import { GENERATED_SOURCE, MANIFEST_PATH } from '../manifest/types.js';
import { cachedBodyOf, storedFileOf } from '../storage/stored-file.js';
import { PageRequisites, setArchived, VIEWER_READS, type AssetCatalog } from '../assets/collect-assets.js';
import type { AssetLimits } from '../assets/asset-types.js';
import type { ServiceLocation } from '../assets/resolve-ref.js';
import { summarizePrototype } from './archive-data.js';
import { INDEX_ERROR_LIMIT, INDEX_PATH, prototypeIndexPath, renderIndex, renderPrototypePage, type IndexEntry } from './index-html.js';
import { buildCssViews, buildPageViews, type GeneratedFile } from './page-views.js';

export interface OfflineViewerOptions {
  fetch: FetchContext;
  frontier: Frontier;
  model: ArchiveModel;
  service: ServiceLocation;
  /** The base URL as given, for the overview's heading. */
  baseUrl: string;
  /** False when page renderings were not exported: no assets and no viewable copies then. */
  pages: boolean;
  /** The collector the crawl fed its page renderings to, with their requisites fetched or on the way. */
  requisites?: PageRequisites;
  limits?: Partial<AssetLimits>;
  onFailed?(source: string, error: RabbitError): void;
}

/**
 * The collector for the page requisites of an export, fed by the crawl's `stored` hook; undefined
 * when page renderings are not exported.
 */
export function pageRequisites(options: Omit<OfflineViewerOptions, 'baseUrl' | 'requisites'>): PageRequisites | undefined {
  if (!options.pages) return undefined;
  return new PageRequisites({
    fetch: options.fetch,
    frontier: options.frontier,
    model: options.model,
    service: options.service,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.onFailed ? { onFailed: options.onFailed } : {}),
  });
}

/**
 * Makes the archive browsable offline: fetches the page requisites the crawl has not already had
 * fetched, writes a viewable copy of every page and stylesheet that needs one, an overview page per
 * prototype and index.html at the root. Everything made here is stored through the spool and
 * listed in the manifest as generated, so `verify` checks it like any other entry. Runs after the
 * crawl has drained, before the manifest is written, one prototype at a time.
 */
export async function addOfflineViewer(options: OfflineViewerOptions): Promise<void> {
  const { model, fetch } = options;
  // Nothing else is in flight now: the requisites have been fetched.
  const read = (ref: BodyRef): Promise<Buffer> => fetch.spool.readBlocking(ref);
  const locate = (entry: ArchivedEntry): StoredFile => ({ ...entry, ...fetch.spool.refOf(entry) });
  let catalog: AssetCatalog | undefined;
  let cssViews = new Map<string, string>();
  if (options.pages) {
    catalog = await (options.requisites ?? (pageRequisites(options) as PageRequisites)).finish(locate);
    model.foreignReferences.push(...foreignList(catalog));
    const sheets: GeneratedFile[] = [];
    cssViews = await buildCssViews(catalog, options.service, sheets, read);
    for (const sheet of sheets) await store(options, sheet);
  }
  const top = await model.files(undefined);
  const entries: IndexEntry[] = [];
  for (const id of model.prototypeIds()) {
    const files = (await model.files(id, VIEWER_READS)).map(locate);
    if (catalog) {
      setArchived(catalog, top, files);
      for (const view of await buildPageViews(files, catalog, cssViews, options.service, read)) files.push(await store(options, view));
    }
    const state = model.prototype(id);
    const summary = await summarizePrototype(id, files, state?.complete ?? false, read);
    if (!summary) continue;
    const page = renderPrototypePage(summary, options.baseUrl);
    await store(options, { path: prototypeIndexPath(id), data: Buffer.from(page, 'utf8'), contentType: 'text/html; charset=utf-8', generatedFrom: MANIFEST_PATH });
    const first = summary.pages.find((p) => p.png);
    entries.push({
      id,
      name: summary.name,
      revision: summary.revision,
      complete: summary.complete,
      pages: summary.pages.length,
      ...(first?.png ? { thumbnail: first.png } : {}),
    });
  }
  const errors = await model.firstErrors(INDEX_ERROR_LIMIT);
  const index = renderIndex({ baseUrl: options.baseUrl, prototypes: entries, errors, errorCount: model.errorCount });
  await store(options, { path: INDEX_PATH, data: Buffer.from(index, 'utf8'), contentType: 'text/html; charset=utf-8', generatedFrom: MANIFEST_PATH });
}

async function store(options: OfflineViewerOptions, generated: GeneratedFile): Promise<StoredFile> {
  const body = await options.fetch.spool.write(Readable.from([generated.data]), { maxBytes: Number.MAX_SAFE_INTEGER, source: generated.path });
  const file = storedFileOf(
    { path: generated.path, source: GENERATED_SOURCE, generatedFrom: generated.generatedFrom },
    cachedBodyOf(body, { contentType: generated.contentType, lastModified: null }),
  );
  const owner = /^prototypes\/(\d+)\//.exec(generated.path)?.[1];
  options.model.addFile(owner !== undefined && options.model.hasPrototype(owner) ? owner : undefined, file);
  return file;
}

function foreignList(catalog: AssetCatalog): { url: string; referencedBy: string[] }[] {
  return [...catalog.foreign]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([url, referrers]) => ({ url, referencedBy: [...referrers].sort() }));
}
